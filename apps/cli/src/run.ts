import packageJson from '../package.json' with { type: 'json' };
import { parseCommand } from './args.js';
import { runAccess, runShareCreate, runShareList, runShareRevoke } from './commands/access.js';
import { runConfig } from './commands/config.js';
import { runConnect } from './commands/connect.js';
import { runDisconnect } from './commands/disconnect.js';
import { runNetworks } from './commands/networks.js';
import { runExposeHttp, runExposeTcp, runServiceAction, runServices } from './commands/services.js';
import { runStatus } from './commands/status.js';
import { runUninstall } from './commands/uninstall.js';
import type { CliContext } from './context.js';
import { CliError } from './errors.js';
import { helpTexts } from './help.js';

export const VERSION: string = packageJson.version;

/** Runs one command line and returns the exit code. Errors become one readable message, never a stack trace. */
export async function runCli(argv: readonly string[], context: CliContext): Promise<number> {
  try {
    const command = parseCommand(argv);
    switch (command.kind) {
      case 'help':
        context.stdout.write(`${helpTexts[command.topic]}\n`);
        return 0;
      case 'version':
        context.stdout.write(`postern ${VERSION}\n`);
        return 0;
      case 'connect':
        return await runConnect(context, command);
      case 'disconnect':
        return await runDisconnect(context, command);
      case 'uninstall':
        return await runUninstall(context, command);
      case 'status':
        return await runStatus(context, command);
      case 'expose-http':
        return await runExposeHttp(context, command);
      case 'expose-tcp':
        return await runExposeTcp(context, command);
      case 'services':
        return await runServices(context, command);
      case 'service-action':
        return await runServiceAction(context, command);
      case 'networks':
        return await runNetworks(context, command);
      case 'access':
        return await runAccess(context, command);
      case 'share-list':
        return await runShareList(context, command);
      case 'share-create':
        return await runShareCreate(context, command);
      case 'share-revoke':
        return await runShareRevoke(context, command);
      case 'config':
        return await runConfig(context, command);
    }
  } catch (error) {
    context.stderr.write(`postern: ${describeError(error)}\n`);
    return error instanceof CliError ? error.exitCode : 1;
  }
}

function describeError(error: unknown): string {
  if (error instanceof CliError) return error.message;
  // Not ours (an OS error or a bug): Node's message already names the code and path, e.g. "EACCES: permission denied,
  // mkdir '/etc/postern'".
  const message = error instanceof Error ? error.message : String(error);
  return /^(EACCES|EPERM)\b/.test(message) ? `${message} (run as root)` : message;
}
