// The sign-in pages visitors of a protected service see (docs/ACCESS.md "The sign-in exchange"): plain HTML with one
// stylesheet from the same path, no script, nothing of the console. Each page names the service it protects and,
// when it refuses, why. Light and dark follow the visitor's system; the layout holds at phone width.

export const STYLESHEET_PATH = '/_postern/access/style.css';

const escapeHtml = (value: string): string =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

/** A template tag that escapes every interpolated value unless it is already markup (`raw`). */
class Raw {
  constructor(readonly html: string) {}
}
const raw = (html: string): Raw => new Raw(html);
function html(strings: TemplateStringsArray, ...values: (string | number | Raw | null | undefined | false)[]): Raw {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    if (value instanceof Raw) out += value.html;
    else if (value !== null && value !== undefined && value !== false) out += escapeHtml(String(value));
    out += strings[i + 1] ?? '';
  });
  return raw(out);
}

export const STYLESHEET = `
:root { color-scheme: light dark; --bg: #f6f7f9; --card: #ffffff; --text: #16181d; --muted: #5b6270; --line: #d9dde3;
  --accent: #2f5bd8; --accent-text: #ffffff; --bad-bg: #fdecec; --bad: #9b1c1c; --ok-bg: #e8f5ec; --ok: #1c6b34; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0f1115; --card: #181b21; --text: #e8eaee; --muted: #a1a8b5; --line: #2c313a; --accent: #6d8ff0;
    --accent-text: #0f1115; --bad-bg: #3a1717; --bad: #f3b1b1; --ok-bg: #15301f; --ok: #9fdcb2; }
}
* { box-sizing: border-box; }
html, body { margin: 0; }
body { min-height: 100vh; display: flex; align-items: center; justify-content: center; padding: 16px;
  background: var(--bg); color: var(--text); font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { width: 100%; max-width: 400px; background: var(--card); border: 1px solid var(--line); border-radius: 12px;
  padding: 28px 24px; }
h1 { font-size: 1.25rem; margin: 0 0 4px; overflow-wrap: anywhere; }
.host { color: var(--muted); margin: 0 0 20px; font-size: 0.9rem; overflow-wrap: anywhere; }
p { margin: 0 0 16px; }
.notice { border-radius: 8px; padding: 10px 12px; margin: 0 0 16px; overflow-wrap: anywhere; }
.notice.bad { background: var(--bad-bg); color: var(--bad); }
.notice.ok { background: var(--ok-bg); color: var(--ok); }
label { display: block; font-weight: 600; margin: 0 0 6px; }
input[type=password] { width: 100%; font: inherit; padding: 10px 12px; border-radius: 8px; border: 1px solid var(--line);
  background: var(--bg); color: var(--text); margin: 0 0 12px; }
.button { display: block; width: 100%; text-align: center; font: inherit; font-weight: 600; padding: 10px 12px;
  border-radius: 8px; border: 1px solid var(--accent); background: var(--accent); color: var(--accent-text);
  text-decoration: none; cursor: pointer; }
.button.secondary { background: transparent; color: var(--accent); }
.or { text-align: center; color: var(--muted); margin: 16px 0; font-size: 0.9rem; }
footer { margin-top: 20px; color: var(--muted); font-size: 0.8rem; text-align: center; }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
`;

function page(title: string, body: Raw): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <title>${title}</title>
        <link rel="stylesheet" href="${STYLESHEET_PATH}" />
      </head>
      <body>
        <main>
          ${body}
          <footer>Protected by Postern</footer>
        </main>
      </body>
    </html> `.html;
}

export interface ServiceLabel {
  /** The service's name as the operator gave it. */
  name: string;
  host: string;
}

const heading = (service: ServiceLabel): Raw =>
  html`<h1>${service.name}</h1>
    <p class="host">${service.host}</p>`;

export interface SignInPageOptions {
  service: ServiceLabel;
  /** "Sign in with …" link (GET), when single sign-on is on. */
  sso: { providerName: string; href: string } | null;
  /** The password form's hidden fields, when a password is set. */
  password: { s: number; rd: string } | null;
  error?: string | undefined;
}

export function signInPage(options: SignInPageOptions): string {
  const { service, sso, password, error } = options;
  const ways: Raw[] = [];
  if (sso) ways.push(html`<a class="button" href="${sso.href}">Sign in with ${sso.providerName}</a>`);
  if (password)
    ways.push(
      html`<form method="post" action="/_postern/access/password">
        <input type="hidden" name="s" value="${password.s}" />
        <input type="hidden" name="rd" value="${password.rd}" />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required autofocus />
        <button class="button${sso ? ' secondary' : ''}" type="submit">Continue</button>
      </form>`,
    );
  const joined = ways.map((way) => way.html).join('<p class="or">or</p>');
  const lead = ways.length === 0 ? html`<p>This service is open through share links only.</p>` : html``;
  return page(
    `Sign in · ${service.name}`,
    html`${heading(service)}${error ? html`<p class="notice bad" role="alert">${error}</p>` : ''}${lead}${raw(joined)}`,
  );
}

/** Why a visitor is turned away (not on the list, link expired…), and what they can do. */
export function refusedPage(service: ServiceLabel | null, title: string, reason: string, retry?: string): string {
  return page(
    `${title}${service ? ` · ${service.name}` : ''}`,
    html`${service ? heading(service) : html`<h1>${title}</h1>`}
      <p class="notice bad" role="alert">${reason}</p>
      ${retry ? html`<a class="button secondary" href="${retry}">Try again</a>` : ''}`,
  );
}

export function signOutPage(host: string, done: boolean): string {
  const body = done
    ? html`<h1>Signed out</h1>
        <p class="host">${host}</p>
        <p class="notice ok" role="status">You are signed out of ${host} on this gateway's services.</p>`
    : html`<h1>Sign out</h1>
        <p class="host">${host}</p>
        <p>End your session on ${host}?</p>
        <form method="post" action="/_postern/access/sign-out">
          <button class="button" type="submit">Sign out</button>
        </form>`;
  return page(done ? 'Signed out' : 'Sign out', body);
}
