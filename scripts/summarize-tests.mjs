// Sums vitest JSON reports into the one closing line CI reads: "N passed, N failed".
// A report that is missing or executed no test counts as a failure, so an empty run is visible.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2] ?? 'artifacts/test-results';
let passed = 0;
let failed = 0;
let skipped = 0;
let files = 0;
for (const name of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
  files += 1;
  const report = JSON.parse(readFileSync(join(dir, name), 'utf8'));
  passed += report.numPassedTests ?? 0;
  failed += report.numFailedTests ?? 0;
  skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  // A suite file that failed to load has no tests but is still a failure.
  for (const suite of report.testResults ?? []) {
    if (suite.status === 'failed' && (suite.assertionResults ?? []).length === 0) failed += 1;
  }
}
if (files === 0 || passed + failed === 0) failed += 1;
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 ? 1 : 0);
