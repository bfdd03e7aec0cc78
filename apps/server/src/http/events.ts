import { EventEmitter } from 'node:events';

// In-process notifications between modules: node mutations tell the node streams which rows changed, so
// streams push on change instead of polling.

export interface NodeChange {
  /** 'changed' keeps the row's place in lists; 'created'/'deleted' shift every later page. */
  kind: 'created' | 'changed' | 'deleted';
  nodeIds: number[];
}

export interface NodeEvents {
  emit(change: NodeChange): void;
  subscribe(listener: (change: NodeChange) => void): () => void;
}

export function createNodeEvents(): NodeEvents {
  const emitter = new EventEmitter();
  // Each stream hub subscribes once, whatever the number of clients; no leak warning for a few hubs.
  emitter.setMaxListeners(0);
  return {
    emit: (change) => emitter.emit('change', change),
    subscribe(listener) {
      emitter.on('change', listener);
      return () => emitter.off('change', listener);
    },
  };
}
