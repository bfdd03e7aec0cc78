/**
 * Who asks for a service change: the console's admin (any node, any domain) or a node's own access token (the
 * agent API: its node only, its node's domains only, within the node quotas, and error texts that never describe
 * another node's things).
 */
export type Caller = 'admin' | 'node';

/**
 * The node scope of the console account making a change (docs/api.md "Node scope"; null or absent: every node). One
 * limited to some nodes publishes only on domains no other node uses or owns, and is told nothing of another node's
 * service its change collides with (a route, a public port); an account that sees every node is told which.
 */
export interface ChangeView {
  nodeScope?: readonly number[] | null;
}

/** Whether the change's account sees every node. */
export const seesEveryNode = (view: ChangeView): boolean => (view.nodeScope ?? null) === null;
