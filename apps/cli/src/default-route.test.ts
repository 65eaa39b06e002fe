import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventMessageKey } from '@singleshot/core';
import { loadConfig } from '@singleshot/config';

// The first notification a newcomer sees: `singleshot start` with no config file
// (the embedded defaults) and the README's quickstart event, rendered by the
// decision code that renders every route.
const empty = mkdtempSync(join(tmpdir(), 'singleshot-defaults-'));
afterAll(() => rmSync(empty, { recursive: true, force: true }));

describe('the embedded default route', () => {
  it("renders an event's data readably", async () => {
    // Loaded as run-apps.ts loads it (lazily), like the decision app in `singleshot start`.
    const { planOperations } = await import('@singleshot/decision');
    const loaded = loadConfig({ cwd: empty, env: {} });
    expect(loaded.source).toBe('defaults');
    const data = { orderId: 'o-9', total: 17, customer: { name: 'Ada' }, tags: ['new'] };
    const { jobs } = planOperations(
      {
        messageKey: eventMessageKey('shop', 'evt-1'),
        firstArrivalAt: 1_700_000_000_000,
        via: 'api',
        input: { kind: 'event', source: 'shop', eventId: 'evt-1', type: 'order.created', recipients: ['a@example.com'], data },
      },
      loaded.config.routes,
      [],
    );
    expect(jobs).toHaveLength(1);
    const text = jobs[0]?.text ?? '';
    expect(text).not.toContain('[object Object]');
    expect(text).toBe('Event evt-1 (order.created) from shop: orderId: o-9, total: 17, customer: {"name":"Ada"}, tags: ["new"]');
    expect(jobs[0]?.subject).toBe('order.created from shop');
  });
});
