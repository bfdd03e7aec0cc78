// Container health check (the image's HEALTHCHECK, the Helm chart's exec probes): exits 0 when the control plane
// answers GET /api/health with a 2xx within the timeout. It asks the control plane directly, where it listens
// (loopback by default: POSTERN_HOST=127.0.0.1), because a probe from outside the pod or container cannot reach it.
// A Node script rather than curl, because the slim runtime image has Node but no curl.
const port = process.env.POSTERN_PORT || '3000';
const listen = process.env.POSTERN_HOST || '127.0.0.1';
// A wildcard listen address is reached on loopback.
const host = listen === '0.0.0.0' || listen === '::' ? '127.0.0.1' : listen;
const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/api/health`;

try {
  const response = await fetch(url, { signal: AbortSignal.timeout(4000) });
  process.exit(response.ok ? 0 : 1);
} catch {
  process.exit(1);
}
