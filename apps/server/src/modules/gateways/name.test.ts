import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { GATEWAY_NAME_FILE, resolveGatewayName } from './name.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'postern-name-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('without POSTERN_GATEWAY_NAME a name is made once and kept in the data dir', () => {
  const name = resolveGatewayName(undefined, dir);
  expect(name).toMatch(/^gw-[0-9a-f]{8}$/);
  expect(readFileSync(join(dir, GATEWAY_NAME_FILE), 'utf8')).toBe(`${name}\n`);
  // A recreated container with the same volume is the same gateway.
  expect(resolveGatewayName(undefined, dir)).toBe(name);
  // The setting wins and leaves the file alone.
  expect(resolveGatewayName('postern-1', dir)).toBe('postern-1');
  expect(resolveGatewayName(undefined, dir)).toBe(name);
});

test('a kept name that is not a valid name stops the boot with a clear reason', () => {
  writeFileSync(join(dir, GATEWAY_NAME_FILE), 'Not A Name\n');
  expect(() => resolveGatewayName(undefined, dir)).toThrow(/does not hold a valid gateway name/);
});
