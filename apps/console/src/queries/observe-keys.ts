import type { ServiceType } from '@postern/contract';

/** Query keys of what the gateway observes; its own module so the home page's status panel loads no operation table. */
export const observeKeys = {
  all: ['observe'] as const,
  figures: (nodeId: number | null) => [...observeKeys.all, 'figures', nodeId] as const,
  traffic: (type: ServiceType, id: number) => [...observeKeys.all, 'traffic', type, id] as const,
  status: ['observe', 'status'] as const,
  /** What needs attention (home page, and the truth service rows tell about their node and certificate). */
  attention: ['observe', 'attention'] as const,
};
