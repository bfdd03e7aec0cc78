import { describe, expect, it } from 'vitest';
import { can, forbiddenMessage, isRoleRefusal, PERMISSIONS, rolePermissions, ROLES } from './roles.js';
import { routes } from './routes.js';

describe('the role policy', () => {
  it('orders the roles: each may do all that the next may', () => {
    for (let i = 1; i < ROLES.length; i++) {
      const higher = ROLES[i - 1] ?? 'viewer';
      const lower = ROLES[i] ?? 'viewer';
      for (const permission of rolePermissions[lower])
        expect(can(higher, permission), `${higher} ${permission}`).toBe(true);
    }
  });

  it('gives a viewer no change and no secret, an operator no settings, an admin no accounts', () => {
    expect(rolePermissions.viewer).toEqual(['self', 'read']);
    expect(can('operator', 'settings')).toBe(false);
    expect(can('admin', 'accounts')).toBe(false);
    expect(PERMISSIONS.every((p) => can('owner', p))).toBe(true);
  });

  it('denies anything that is not a role', () => {
    for (const who of [undefined, null, '', 'Owner', 'root', '__proto__', 'toString'])
      expect(
        PERMISSIONS.some((p) => can(who, p)),
        String(who),
      ).toBe(false);
  });

  it('names a permission for every session route, and the roles that hold it in a 403', () => {
    for (const [name, route] of Object.entries(routes)) {
      if (route.auth !== 'session') continue;
      expect(PERMISSIONS, name).toContain(route.permission);
    }
    expect(forbiddenMessage('viewer', 'operate')).toBe(
      'Your role (Viewer) may not change nodes, domains, services or access tokens: Owner, Admin, Operator only',
    );
  });
  it("tells the policy's 403 from any other (the console keeps the session for it)", () => {
    for (const role of ROLES)
      for (const permission of PERMISSIONS) expect(isRoleRefusal(forbiddenMessage(role, permission))).toBe(true);
    expect(isRoleRefusal('The session is only handed to the console itself')).toBe(false);
    expect(isRoleRefusal(undefined)).toBe(false);
  });
});
