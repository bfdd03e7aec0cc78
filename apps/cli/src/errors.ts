// One error type for everything the user should read: main prints `message` (never a stack) and exits with `exitCode`.
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** The gateway answered 422: the request's fields it refused, each with its reason. */
export class FieldsRefusedError extends CliError {
  constructor(
    message: string,
    readonly fieldErrors: readonly { field: string; message: string }[],
  ) {
    super(message);
    this.name = 'FieldsRefusedError';
  }
}

/** Wrong command line: exit code 2, like most Unix tools. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, 2);
    this.name = 'UsageError';
  }
}

/**
 * Exit code when the token is refused or malformed: restarting cannot help, so a supervisor can stop retrying
 * (systemd: RestartPreventExitStatus=3).
 */
export const EXIT_BAD_TOKEN = 3;

/** The gateway refused the token (revoked, expired, unknown): retrying cannot help, so the daemon stops on it. */
export class TokenRejectedError extends CliError {
  constructor(serverMessage: string) {
    super(`The gateway refused the access token: ${serverMessage}`, EXIT_BAD_TOKEN);
    this.name = 'TokenRejectedError';
  }
}

/** No answer from the gateway (refused, timed out, DNS): the daemon waits and tries again. */
export class GatewayUnreachableError extends CliError {
  constructor(url: string, reason: string) {
    super(`Cannot reach the gateway at ${url}: ${reason}`);
    this.name = 'GatewayUnreachableError';
  }
}

/** The gateway's certificate did not pass (untrusted, wrong name, pin mismatch): retrying the same way cannot help. */
export class GatewayCertificateError extends CliError {
  constructor(message: string) {
    super(message);
    this.name = 'GatewayCertificateError';
  }
}

export const TOOLS_MISSING_MESSAGE =
  'WireGuard tools not found: install wireguard-tools (and wireguard-go when the kernel has no WireGuard)';
