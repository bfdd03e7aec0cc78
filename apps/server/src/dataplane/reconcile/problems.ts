import type { ApplyResult } from '../types.js';

// What the system status shows at once after an apply, without waiting for the next drift check: a change the data
// plane could not apply as a whole, and services set aside because nginx had no room for them.

/** How every reason for a service set aside for lack of room in nginx begins (proxy.ts). */
export const NO_ROOM = 'nginx has no room for ';

/** One line for the services nginx had no room for. */
export function noRoomLine(ids: readonly number[]): string {
  const sorted = [...ids].sort((a, b) => a - b);
  return `${NO_ROOM}${sorted.length === 1 ? 'service' : 'services'} ${sorted.join(', ')}: they are not served`;
}

export function applyProblems(result: ApplyResult): string[] {
  const problems: string[] = [];
  if (!result.ok) problems.push(`the last change could not be applied: ${result.message}`);
  const crowded = [...result.rejected.http].filter(([, message]) => message.startsWith(NO_ROOM)).map(([id]) => id);
  if (crowded.length > 0) problems.push(noRoomLine(crowded));
  return problems;
}
