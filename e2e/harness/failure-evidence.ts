import { fileURLToPath } from 'node:url';
import { afterAll, afterEach } from 'vitest';
import type { RunnerTaskResult, RunnerTestFile, RunnerTestSuite } from 'vitest';
import { saveGatewayEvidence } from './gateway-logs.js';

// Setup file of every e2e test file (vitest.config.ts): when a test fails, or a suite's beforeAll/afterAll does, the
// gateways' output and logs are saved under artifacts/e2e-logs/ and their last lines added to the failure's message
// (harness/gateway-logs.ts), so a failure in CI carries what the gateway said.

const ARTIFACTS = fileURLToPath(new URL('../../artifacts/e2e-logs', import.meta.url));

/** Adds the evidence to a failed task's first error; returns it ('' when the task passed or no gateway ran). */
function addEvidence(result: RunnerTaskResult | undefined, file: string, name: string): string {
  const error = result?.errors?.[0];
  if (result?.state !== 'fail' || error === undefined) return '';
  const evidence = saveGatewayEvidence(ARTIFACTS, file, name);
  if (evidence === '') return '';
  const header = error.message;
  error.message = `${header}\n\n${evidence}`;
  // The JSON report shows the stack, which begins with the message.
  if (error.stack?.includes(header) === true) error.stack = error.stack.replace(header, error.message);
  return evidence;
}

afterEach(({ task }) => {
  addEvidence(task.result, task.file.name, task.name);
});

// A suite whose beforeAll (or afterAll) failed runs no test: its error gets the evidence here, and it is printed
// (the reporter may have taken the suite's result already). The lab is gone by now: the data directories' logs are
// the ones read as it was destroyed. (vitest passes the suite as the second argument, after a fixture context.)
// eslint-disable-next-line no-empty-pattern -- vitest requires the first argument to be a destructuring pattern
afterAll(({}, file) => {
  const visit = (suite: Readonly<RunnerTestSuite | RunnerTestFile>): void => {
    const evidence = addEvidence(suite.result, file.name, suite.name);
    if (evidence !== '') console.error(`${file.name} > ${suite.name} failed before or after its tests:\n${evidence}`);
    for (const task of suite.tasks) if (task.type === 'suite') visit(task);
  };
  visit(file);
});
