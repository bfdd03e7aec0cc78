// Sums vitest JSON reports into the one closing line CI reads: "N passed, N failed".
// A report that is missing or executed no test counts as a failure, so an empty run is visible.
// With POSTERN_TEST_REQUIRE=all (the test command as root) a skipped test counts as failed unless EXPECTED_SKIPS names
// it: a skipIf/runIf gate that turned a suite off for a missing prerequisite (PostgreSQL, nginx, root, Docker, a
// build) must not let the run pass without it.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The tests the test command skips on purpose, by report (file name without .json), test file and title. */
const EXPECTED_SKIPS = [
  {
    report: 'unit',
    file: 'apps/server/src/secrets.test.ts',
    title: /^refuses a file this process may not read$/,
    why: 'root may read every file (the test command runs as root; a run as a user covers it)',
  },
  {
    report: 'api-postgres',
    file: /^apps\/server\/src\/(modules\/(auth|access|notifications)\/across-gateways|modules\/gateways\/gateways|db\/(outage|announce)|cluster\/(shared-certificates|leases))\.test\.ts$/,
    title: /./,
    why: 'the multi-gateway suites make PostgreSQL databases of their own: the unit pass runs them already',
  },
];

const root = process.cwd();
const dir = process.argv[2] ?? 'artifacts/test-results';
const isEverySuiteRequired = (process.env.POSTERN_TEST_REQUIRE ?? '').split(',').includes('all');
/** The first line of a failure message, so the end of a CI log names what failed and why without its stack. */
const firstLine = (message) =>
  String(message ?? '')
    .split('\n', 1)[0]
    .slice(0, 300);
const matches = (pattern, value) => (typeof pattern === 'string' ? pattern === value : pattern.test(value));

let passed = 0;
let failed = 0;
let skipped = 0;
let files = 0;
const unexpectedSkips = [];
const failures = [];
for (const name of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
  files += 1;
  const reportName = name.slice(0, -'.json'.length);
  const report = JSON.parse(readFileSync(join(dir, name), 'utf8'));
  passed += report.numPassedTests ?? 0;
  failed += report.numFailedTests ?? 0;
  for (const suite of report.testResults ?? []) {
    // A suite file that failed to load has no tests but is still a failure.
    const file = relative(root, suite.name ?? '');
    if (suite.status === 'failed' && (suite.assertionResults ?? []).length === 0) {
      failed += 1;
      failures.push(`${reportName}: ${file} did not load: ${firstLine(suite.message)}`);
    }
    for (const test of suite.assertionResults ?? []) {
      if (test.status === 'failed')
        failures.push(`${reportName}: ${file} > ${test.fullName}: ${firstLine(test.failureMessages?.[0])}`);
      if (!['pending', 'skipped', 'todo'].includes(test.status)) continue;
      const isExpected = EXPECTED_SKIPS.some(
        (skip) => skip.report === reportName && matches(skip.file, file) && matches(skip.title, test.title),
      );
      if (isEverySuiteRequired && !isExpected) unexpectedSkips.push(`${reportName}: ${file} > ${test.fullName}`);
      else skipped += 1;
    }
  }
}
// CI keeps only the end of the log: repeat each failure there, with the first line of its message.
if (failures.length > 0) console.error(`failed:\n  ${failures.join('\n  ')}`);
if (unexpectedSkips.length > 0) {
  console.error(
    `skipped although POSTERN_TEST_REQUIRE=all (each counts as failed):\n  ${unexpectedSkips.join('\n  ')}`,
  );
  failed += unexpectedSkips.length;
}
if (files === 0 || passed + failed === 0) failed += 1;
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 ? 1 : 0);
