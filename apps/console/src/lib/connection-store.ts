// Whether the gateway can be reached, as the last calls and the open live streams saw it: a store outside React
// (like the toasts) so the API client and the streams can report without importing components. The shell shows a
// banner while the gateway is unreachable; the log viewer shows its own stream's state.

export type StreamState = 'connecting' | 'open' | 'retrying';

type Listener = () => void;

let isApiUnreachable = false;
const streamStates = new Map<number, StreamState>();
let nextStreamId = 1;
let snapshot = { isApiUnreachable: false, isStreamRetrying: false };
const listeners = new Set<Listener>();

function publish(): void {
  const isStreamRetrying = [...streamStates.values()].includes('retrying');
  if (snapshot.isApiUnreachable === isApiUnreachable && snapshot.isStreamRetrying === isStreamRetrying) return;
  snapshot = { isApiUnreachable, isStreamRetrying };
  for (const listener of listeners) listener();
}

/** A call got no answer, or a 5xx (true); or any answer from the server at all (false). */
export function reportApiReachable(isReachable: boolean): void {
  isApiUnreachable = !isReachable;
  publish();
}

/** A stream registers itself; the returned functions report its state and remove it. */
export function registerStream(): { report: (state: StreamState) => void; remove: () => void } {
  const id = nextStreamId++;
  streamStates.set(id, 'connecting');
  return {
    report(state) {
      streamStates.set(id, state);
      // A stream that opened has reached the gateway: a call that failed before is old news.
      if (state === 'open') isApiUnreachable = false;
      publish();
    },
    remove() {
      streamStates.delete(id);
      publish();
    },
  };
}

export function getConnection(): { isApiUnreachable: boolean; isStreamRetrying: boolean } {
  return snapshot;
}

export function subscribeToConnection(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
