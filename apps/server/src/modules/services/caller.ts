/**
 * Who asks for a service change: the console's admin (any node, any domain) or a node's own access token (the
 * agent API: its node only, its node's domains only, within the node quotas, and error texts that never describe
 * another node's things).
 */
export type Caller = 'admin' | 'node';

/**
 * What a console change may tell about other nodes' things: the service that holds a route or a port is named only
 * to an account that sees every node (`seesEveryNode: false` for one limited to some, docs/api.md "Node scope").
 */
export interface ChangeView {
  seesEveryNode?: boolean;
}
