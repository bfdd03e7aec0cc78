// Waiting on a condition with a deadline, the one polling loop: the data plane's supervision (a process gone, a link
// up, nginx's new workers) and the tests' waitFor (test/wait-for.ts) both use it. Never a fixed sleep: the caller
// goes on as soon as the condition holds.

/**
 * Polls `condition` every `intervalMs` until it holds (true) or `timeoutMs` has passed (false). The condition is
 * asked once more at the deadline, so a slow poll never loses the last chance.
 */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
  intervalMs = 20,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
