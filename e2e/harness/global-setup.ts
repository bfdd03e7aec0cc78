import { RUN_ID_ENV, newRunId } from './ids.js';
import { linksWithPrefix, namespacesWithPrefix, sweepNamespaces } from './cleanup.js';
import { isDockerUp, sweepDocker } from './docker.js';

// One run id for the whole e2e run, handed to every test file through the environment (files run in forked
// processes started after this). At the end, whatever a crashed file left behind under that id is removed:
// namespaces and links, and the image tests' containers, networks and volumes.

export default function setup(): () => void {
  const runId = newRunId();
  process.env[RUN_ID_ENV] = runId;
  return () => {
    const leftovers = [...namespacesWithPrefix(runId), ...linksWithPrefix(runId)];
    if (leftovers.length > 0)
      console.warn(`e2e: removing namespaces and links left by crashed tests: ${leftovers.join(' ')}`);
    sweepNamespaces(runId);
    if (isDockerUp()) {
      const containers = sweepDocker(runId);
      if (containers.length > 0)
        console.warn(
          `e2e: removed Docker containers, networks and volumes left by crashed tests: ${containers.join(' ')}`,
        );
    }
  };
}
