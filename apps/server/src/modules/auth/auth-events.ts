// Security events of the admin's sign-in that the audit log records (issue 15 part 1). This module only announces
// them; the audit module subscribes with `onAuthEvent` (the one place to wire it). No listener: nothing happens.

export type AuthEventKind =
  | 'sign_in.second_factor'
  | 'sign_in.second_factor_failed'
  | 'sign_in.recovery_code_used'
  | 'two_factor.enabled'
  | 'two_factor.disabled';

export interface AuthEvent {
  kind: AuthEventKind;
  userId: number;
  username: string;
  /** The client's address as the sign-in limiter sees it. */
  ip: string;
  at: Date;
}

type Listener = (event: AuthEvent) => void;
const listeners = new Set<Listener>();

/** Subscribes to every auth event; returns the unsubscribe function. */
export function onAuthEvent(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function emitAuthEvent(event: AuthEvent): void {
  for (const listener of listeners) {
    // A failing listener (the audit log's disk is full) must not fail the sign-in itself.
    try {
      listener(event);
    } catch {
      /* the listener reports its own failures */
    }
  }
}
