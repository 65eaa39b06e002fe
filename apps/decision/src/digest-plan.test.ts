import { describe, expect, it } from 'vitest';
import { digestGroupId, eventMessageKey, tenantKey, type DecideJobData } from '@singleshot/core';
import { digestSchema, type RouteConfig } from '@singleshot/config';
import { planDigestJoins } from './digest-plan';

// Two tenants' events to one recipient on one digest route: two groups, so
// one tenant's items never show in the digest another tenant's recipient gets.
const route = {
  name: 'daily',
  match: { source: 'shop' },
  action: 'notify',
  channel: 'webhook',
  recipients: 'event',
  template: { text: 'x' },
  digest: digestSchema.parse({ window: '1h' }),
} as unknown as RouteConfig;
const job = (tenant: string | undefined): DecideJobData => ({
  messageKey: tenantKey(tenant, eventMessageKey('shop', 'o-1')),
  firstArrivalAt: 1,
  via: 'api',
  input: { kind: 'event', ...(tenant ? { tenant } : {}), source: 'shop', eventId: 'o-1', type: 't', recipients: ['a@x.test'], data: {} },
});

describe('planDigestJoins per tenant', () => {
  it("keeps the default tenant's group and gives another tenant its own", () => {
    const [plain] = planDigestJoins(job(undefined), [route], []);
    const [acme] = planDigestJoins(job('acme'), [route], []);
    expect(plain?.group).toBe(digestGroupId('daily', 'a@x.test', ''));
    expect(acme?.group).toBe(tenantKey('acme', digestGroupId('daily', 'a@x.test', '')));
    expect(acme?.group).not.toBe(plain?.group);
  });
});
