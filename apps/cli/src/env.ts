// The only place the CLI reads its environment (lint rule): everything else receives these values.
export interface CliEnv {
  url: string | undefined;
  token: string | undefined;
  configDir: string | undefined;
  /**
   * POSTERN_PIN: certificate pin (`sha256:…`) when neither --pin nor a stored one applies; checked where it is used.
   */
  pin: string | undefined;
  /** Where `which` looks for ip, wg and wireguard-go. */
  path: string;
  /** `postern admin`: the console admin's password when no --password-file is given (POSTERN_ADMIN_PASSWORD). */
  adminPassword?: string | undefined;
  /** `postern admin`: the second-factor code when the admin has two-factor sign-in (POSTERN_ADMIN_OTP). */
  adminOtp?: string | undefined;
  /** `connect --daemon`: seconds between config re-fetches (POSTERN_REFRESH_SECONDS); system tests shorten it. */
  refreshSeconds: number | undefined;
}

export function readEnv(env: NodeJS.ProcessEnv = process.env): CliEnv {
  return {
    url: nonEmpty(env.POSTERN_URL),
    token: nonEmpty(env.POSTERN_TOKEN),
    configDir: nonEmpty(env.POSTERN_CONFIG_DIR),
    pin: nonEmpty(env.POSTERN_PIN),
    path: env.PATH ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    refreshSeconds: positiveNumber(env.POSTERN_REFRESH_SECONDS),
    adminPassword: env.POSTERN_ADMIN_PASSWORD === '' ? undefined : env.POSTERN_ADMIN_PASSWORD,
    adminOtp: env.POSTERN_ADMIN_OTP === '' ? undefined : env.POSTERN_ADMIN_OTP,
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function positiveNumber(value: string | undefined): number | undefined {
  const number = Number(nonEmpty(value));
  return Number.isFinite(number) && number > 0 ? number : undefined;
}
