import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { settleTransitions } from './browser.js';

// axe-core in the page under test: its source is evaluated through the DevTools protocol (not a <script> tag, which
// the console's Content-Security-Policy rightly refuses), then run on the whole document as the user sees it.

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** The impacts that fail a test (WCAG 2.2 AA rules; minor and moderate findings are reported by the audit only). */
const FAILING_IMPACTS = new Set(['serious', 'critical']);

export interface Violation {
  screen: string;
  rule: string;
  impact: string;
  help: string;
  targets: string[];
}

/** The serious and critical WCAG 2.x A/AA violations on the page now, each with where it was found. */
export async function axeViolations(page: Page, screen: string): Promise<Violation[]> {
  // A toast or dialog still fading in has, for that moment, too little contrast: judge the page as it settles.
  await settleTransitions(page);
  const hasAxe = await page.evaluate(() => 'axe' in window);
  if (!hasAxe) await page.evaluate(axeSource);
  const found = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run(
            context: Document,
            options: object,
          ): Promise<{
            violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[];
          }>;
        };
      }
    ).axe;
    const result = await axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] },
      resultTypes: ['violations'],
    });
    return result.violations.map((violation) => ({
      rule: violation.id,
      impact: violation.impact ?? 'unknown',
      help: violation.help,
      targets: violation.nodes.map((node) => node.target.map(String).join(' ')),
    }));
  });
  return found
    .filter((violation) => FAILING_IMPACTS.has(violation.impact))
    .map((violation) => ({ screen, ...violation }));
}
