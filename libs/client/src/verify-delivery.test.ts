import { describe, expect, it } from 'vitest';
import { DeliveryVerificationError, MemoryDeliveryStore, lookupDelivery, verifyDelivery } from './index';

const key = 'a'.repeat(64);
const body = { operationKey: key, messageKey: 'm', recipient: 'r', channel: 'webhook', subject: 's', text: 't', data: {} };

describe('verifyDelivery', () => {
  it('takes a delivery once: new, then in progress, then duplicate with the first id; lookup follows', async () => {
    const store = new MemoryDeliveryStore();
    const first = await verifyDelivery({ headers: { 'Idempotency-Key': key }, body: JSON.stringify(body) }, { store });
    expect(first.kind).toBe('new');
    expect((await verifyDelivery({ headers: { 'idempotency-key': key }, body }, { store })).kind).toBe('in_progress');
    expect(await lookupDelivery(store, key)).toEqual({ status: 409 });
    if (first.kind === 'new') await first.commit('rcpt-1');
    expect(await verifyDelivery({ headers: new Headers({ 'idempotency-key': key }), body }, { store })).toMatchObject({ kind: 'duplicate', id: 'rcpt-1' });
    expect(await lookupDelivery(store, key)).toEqual({ status: 200, body: { id: 'rcpt-1' } });
    expect(await lookupDelivery(store, 'b'.repeat(64))).toEqual({ status: 404 });
  });

  it('an abandoned delivery is taken again by the next attempt', async () => {
    const store = new MemoryDeliveryStore();
    const first = await verifyDelivery({ headers: { 'idempotency-key': key }, body }, { store });
    if (first.kind === 'new') await first.abandon();
    expect((await verifyDelivery({ headers: { 'idempotency-key': key }, body }, { store })).kind).toBe('new');
  });

  it('rejects requests that are not well-formed deliveries, by code', async () => {
    const store = new MemoryDeliveryStore();
    const codeOf = (p: Promise<unknown>) => p.then(() => 'none', (e: unknown) => (e instanceof DeliveryVerificationError ? e.code : 'other'));
    expect(await codeOf(verifyDelivery({ headers: {}, body }, { store }))).toBe('MISSING_IDEMPOTENCY_KEY');
    expect(await codeOf(verifyDelivery({ headers: { 'idempotency-key': 'b'.repeat(64) }, body }, { store }))).toBe('KEY_MISMATCH');
    expect(await codeOf(verifyDelivery({ headers: { 'idempotency-key': key }, body: '{not json' }, { store }))).toBe('INVALID_BODY');
    expect(await codeOf(verifyDelivery({ headers: { 'idempotency-key': key }, body: { operationKey: key } }, { store }))).toBe('INVALID_BODY');
  });
});
