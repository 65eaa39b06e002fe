import { describe, expect, it } from 'vitest';
import { configSchema } from './schema';
import { fairShareOn, weightsOf } from './tenants';

const parse = (raw: Record<string, unknown>) => configSchema.safeParse(raw);
const messages = (raw: Record<string, unknown>) => {
  const r = parse(raw);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

describe('tenancy config', () => {
  it('turns the fair queue on with a tenant or a bulk route under auto, and never under off', () => {
    const of = (raw: Record<string, unknown>) => {
      const r = parse(raw);
      if (!r.success) throw r.error;
      return fairShareOn(r.data);
    };
    expect(of({})).toBe(false);
    expect(of({ tenancy: { tenants: [{ id: 'acme' }] } })).toBe(true);
    expect(of({ ingest: { apiKeys: [{ name: 'k', key: 'k'.repeat(24), sources: ['*'], tenant: 'acme' }] } })).toBe(true);
    expect(of({ routes: [{ name: 'news', match: { source: 'news' }, action: 'notify', channel: 'email', priority: 'bulk', template: { text: 'x' } }], providers: { email: [{ name: 'log', type: 'log' }] } })).toBe(true);
    expect(of({ tenancy: { fairShare: 'off', tenants: [{ id: 'acme' }] } })).toBe(false);
    expect(of({ tenancy: { fairShare: 'on' } })).toBe(true);
  });

  it('gives a tenant not listed weight 1', () => {
    const r = parse({ tenancy: { tenants: [{ id: 'acme', weight: 3 }] } });
    if (!r.success) throw r.error;
    const weightOf = weightsOf(r.data);
    expect([weightOf('acme'), weightOf('globex')]).toEqual([3, 1]);
  });

  it('refuses a tenant listed twice, and maxPending without the fair queue that counts it', () => {
    expect(messages({ tenancy: { tenants: [{ id: 'acme' }, { id: 'acme', weight: 2 }] } })).toEqual(['tenancy.tenants.1.id: tenant "acme" is listed twice']);
    expect(messages({ tenancy: { fairShare: 'off', tenants: [{ id: 'acme', maxPending: 10 }] } })).toEqual(['tenancy.tenants.0.maxPending: maxPending needs the fair queue: fairShare must not be off']);
    expect(messages({ tenancy: { tenants: [{ id: 'Acme' }] } })).toHaveLength(1);
    expect(messages({ tenancy: { tenants: [{ id: 'acme', weight: 0 }] } })).toHaveLength(1);
  });
});
