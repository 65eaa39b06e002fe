import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { eventMessageKey } from './keys';
import { DEFAULT_TENANT, TENANT_ID, tenantKey } from './tenant';

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

describe('tenantKey', () => {
  it("keeps the default tenant's keys as they are: a deployment without tenants keeps its records", () => {
    const key = eventMessageKey('shop', 'o-1');
    expect(tenantKey(undefined, key)).toBe(key);
    expect(tenantKey(DEFAULT_TENANT, key)).toBe(key);
  });

  it("hashes another tenant's key once more after its name (computed here with node:crypto)", () => {
    const key = eventMessageKey('shop', 'o-1');
    expect(tenantKey('acme', key)).toBe(sha(`acme/${key}`));
    expect(tenantKey('acme', key)).not.toBe(tenantKey('globex', key));
  });

  it("no default input reaches a tenant's key: the source and id that spell a tenant's input still hold a ':'", () => {
    const key = eventMessageKey('shop', 'o-1');
    // A producer of the default tenant trying to post into acme's identity: `source:id` is never `acme/<hex>`.
    expect(eventMessageKey('acme/' + key.slice(0, 10), key.slice(10))).not.toBe(tenantKey('acme', key));
  });

  it('tenant ids are bounded and hold no separator', () => {
    for (const ok of ['acme', 'a', 'tenant_1', 'x-y', 'a'.repeat(64)]) expect(TENANT_ID.test(ok)).toBe(true);
    for (const bad of ['', 'Acme', 'a/b', 'a:b', '-a', 'a'.repeat(65), 'a b']) expect(TENANT_ID.test(bad)).toBe(false);
  });
});
