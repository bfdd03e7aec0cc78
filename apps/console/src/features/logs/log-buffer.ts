import { limits } from '@postern/contract';

/** A line as shown: `id` grows with every line received, so React keeps rows stable while old ones drop off. */
export type LogLine = { id: number; text: string };

/**
 * Appends a batch and keeps only the newest `max` entries (the spec's "Business constants and limits": at most 1000,
 * oldest dropped).
 */
export function appendLogLines<T>(
  current: readonly T[],
  batch: readonly T[],
  max: number = limits.logMaxLines,
): readonly T[] {
  if (batch.length === 0) return current;
  const combined = [...current, ...batch];
  return combined.length > max ? combined.slice(combined.length - max) : combined;
}
