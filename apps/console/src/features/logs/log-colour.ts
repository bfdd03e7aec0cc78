// Line colour by level marker (the spec's "Screens and routes", Log viewer). The viewer is always dark, so the classes
// are picked for a dark background and do not follow the theme.

const MARKER_CLASSES: readonly (readonly [marker: string, className: string])[] = [
  ['[ERROR]', 'text-red-400'],
  ['[WARNING]', 'text-yellow-300'],
  ['[WARN]', 'text-yellow-300'],
  ['[INFO]', 'text-blue-400'],
  ['[DEBUG]', 'text-green-400'],
];

export const NEUTRAL_LOG_CLASS = 'text-gray-300';

/** The colour class for a log line: the first level marker found in it decides. */
export function getLogLineClass(line: string): string {
  let best: { index: number; className: string } | null = null;
  for (const [marker, className] of MARKER_CLASSES) {
    const index = line.indexOf(marker);
    if (index >= 0 && (best === null || index < best.index)) best = { index, className };
  }
  return best?.className ?? NEUTRAL_LOG_CLASS;
}
