import { defaults } from '@postern/contract';

// A tiny store outside React so non-component code (the API client) can raise toasts too.

export type ToastType = 'info' | 'error' | 'warning' | 'success';
export type Toast = { id: number; message: string; type: ToastType; duration: number };
export type ToastInput = { message: string; type?: ToastType; duration?: number };

type Listener = () => void;

let toasts: readonly Toast[] = [];
let nextId = 1;
const listeners = new Set<Listener>();

function publish(next: readonly Toast[]): void {
  toasts = next;
  for (const listener of listeners) listener();
}

export function showToast({ message, type = 'info', duration = defaults.toastDurationMs }: ToastInput): number {
  const id = nextId++;
  publish([...toasts, { id, message, type, duration }]);
  setTimeout(() => dismissToast(id), duration);
  return id;
}

export function dismissToast(id: number): void {
  if (toasts.some((t) => t.id === id)) publish(toasts.filter((t) => t.id !== id));
}

export function getToasts(): readonly Toast[] {
  return toasts;
}

export function subscribeToToasts(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
