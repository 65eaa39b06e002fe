import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import pino from 'pino';
import { eventMessageKey, tenantKey } from '@singleshot/core';
import { HandOff } from './hand-off';
import { relayMetrics } from './metrics';

// A source with a `tenant` in its config hands its events over as that
// tenant's: the tenant's message key and the tenant in the decide job's input.
// A source without one keeps the default tenant's key and an input without it.
describe('HandOff per source tenant', () => {
  it("keys and marks each source's events with its tenant", async () => {
    const accepted: Array<{ messageKey: string; input: { tenant?: string } }> = [];
    const handOff = new HandOff({
      accept: async (message) => {
        accepted.push(message);
        return { messageKey: message.messageKey, status: 'accepted' };
      },
      addDead: async () => undefined,
      tenants: new Map([['acme-events', 'acme']]),
      metrics: relayMetrics(new Registry(), async () => []),
      logger: pino({ level: 'silent' }),
    });
    const event = { id: 'e-1', source: 'shop', type: 'order.created', data: {} };
    const origin = { key: 'k', details: {}, body: '{}' };
    const signal = new AbortController().signal;
    await handOff.handle('acme-events', { ok: true, event }, origin, { signal });
    await handOff.handle('plain', { ok: true, event }, origin, { signal });
    expect(accepted[0]).toMatchObject({ messageKey: tenantKey('acme', eventMessageKey('shop', 'e-1')), input: { tenant: 'acme' } });
    expect(accepted[1]?.messageKey).toBe(eventMessageKey('shop', 'e-1'));
    expect(accepted[1]?.input).not.toHaveProperty('tenant');
  });
});
