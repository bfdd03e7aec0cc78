// Container health check: exits 0 when the gateway's API answers GET /api/health with a 2xx within the timeout.
// A Node script rather than curl, because the slim runtime image has Node but no curl.
const port = process.env.POSTERN_PORT || '3000';
const url = `http://127.0.0.1:${port}/api/health`;

try {
  const response = await fetch(url, { signal: AbortSignal.timeout(4000) });
  process.exit(response.ok ? 0 : 1);
} catch {
  process.exit(1);
}
