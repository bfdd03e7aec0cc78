import { nextTurn, PLAN_SLICE_ROWS } from './nginx/routes.js';

/**
 * Calls `visit` on each item, the event loop given back every `rows` (each visit a few µs: at 100,000 domains a loop
 * over all of them in one turn held every request and change 100-600 ms on this machine; bench/README.md).
 */
export async function forEachSliced<T>(
  items: Iterable<T>,
  visit: (item: T) => void,
  rows = PLAN_SLICE_ROWS,
): Promise<void> {
  let inTurn = 0;
  for (const item of items) {
    if (++inTurn === rows) {
      inTurn = 0;
      await nextTurn();
    }
    visit(item);
  }
}
