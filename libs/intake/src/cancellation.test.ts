import { describe, expect, it } from 'vitest';
import { eventMessageKey, tenantKey } from '@singleshot/core';
import type { MessageCancel } from '@singleshot/store';
import { cancelOutcomeLabels, cancelTargetOf, cancellationBodySchema } from './cancellation';

// The target rules ingest and the dashboard share: exactly one target, a
// message key only for an asker that may cancel any source, a source implied
// by a key limited to one, and no other source's events.
const body = (b: Record<string, unknown>) => cancellationBodySchema.parse(b);
const any = { name: 'ops', sources: undefined };
const shopOnly = { name: 'shop-key', sources: new Set(['shop']) };
const two = { name: 'two', sources: new Set(['shop', 'billing']) };
const messageKey = 'a'.repeat(64);

describe('cancelTargetOf', () => {
  it('resolves each of the three forms', () => {
    expect(cancelTargetOf(body({ messageKey }), any)).toEqual({ kind: 'message', messageKey });
    expect(cancelTargetOf(body({ source: 'shop', id: 'e1' }), any)).toEqual({ kind: 'message', messageKey: eventMessageKey('shop', 'e1') });
    expect(cancelTargetOf(body({ source: 'shop', cancellationKey: 'o-7' }), any)).toEqual({ kind: 'key', source: 'shop', cancellationKey: 'o-7' });
  });

  it.each([[{}], [{ messageKey, id: 'e1', source: 'shop' }], [{ id: 'e1', cancellationKey: 'k', source: 'shop' }]])('refuses %j: not exactly one target', (b) => {
    expect(cancelTargetOf(body(b), any)).toMatchObject({ kind: 'refused', status: 400, code: 'INVALID_CANCELLATION' });
  });

  it('a key limited to one source implies it; one limited to several must name it', () => {
    expect(cancelTargetOf(body({ id: 'e1' }), shopOnly)).toEqual({ kind: 'message', messageKey: eventMessageKey('shop', 'e1') });
    expect(cancelTargetOf(body({ id: 'e1' }), two)).toMatchObject({ kind: 'refused', status: 400, code: 'INVALID_CANCELLATION' });
    expect(cancelTargetOf(body({ id: 'e1' }), any)).toMatchObject({ kind: 'refused', status: 400 });
  });

  it("refuses another source's events and a message key to a limited key", () => {
    expect(cancelTargetOf(body({ source: 'billing', id: 'e1' }), shopOnly)).toMatchObject({ kind: 'refused', status: 403, code: 'CANCEL_NOT_ALLOWED' });
    expect(cancelTargetOf(body({ source: 'billing', cancellationKey: 'k' }), shopOnly)).toMatchObject({ kind: 'refused', status: 403 });
    expect(cancelTargetOf(body({ messageKey }), two)).toMatchObject({ kind: 'refused', status: 403, code: 'CANCEL_NOT_ALLOWED' });
  });
});

describe('cancelTargetOf with a key bound to a tenant', () => {
  // Its ids and cancellation keys are its tenant's own; a message key must be one of its tenant's.
  const acme = { name: 'acme', sources: undefined, tenant: 'acme' };
  it("resolves ids and cancellation keys in the tenant's own names", () => {
    expect(cancelTargetOf(body({ source: 'shop', id: 'e1' }), acme)).toEqual({ kind: 'message', messageKey: tenantKey('acme', eventMessageKey('shop', 'e1')) });
    expect(tenantKey('acme', eventMessageKey('shop', 'e1'))).not.toBe(eventMessageKey('shop', 'e1'));
    expect(cancelTargetOf(body({ source: 'shop', cancellationKey: 'o-7' }), acme)).toEqual({ kind: 'key', source: 'shop', cancellationKey: 'o-7', tenant: 'acme' });
  });

  it('names the owner a message key must have', () => {
    expect(cancelTargetOf(body({ messageKey }), acme)).toEqual({ kind: 'message', messageKey, owner: 'acme' });
  });

  it('may name its own tenant, never another; an asker without one may name any', () => {
    expect(cancelTargetOf(body({ source: 'shop', id: 'e1', tenant: 'acme' }), acme)).toEqual({ kind: 'message', messageKey: tenantKey('acme', eventMessageKey('shop', 'e1')) });
    expect(cancelTargetOf(body({ source: 'shop', id: 'e1', tenant: 'globex' }), acme)).toMatchObject({ kind: 'refused', status: 403, code: 'CANCEL_NOT_ALLOWED' });
    expect(cancelTargetOf(body({ source: 'shop', id: 'e1', tenant: 'globex' }), any)).toEqual({ kind: 'message', messageKey: tenantKey('globex', eventMessageKey('shop', 'e1')) });
    expect(cancelTargetOf(body({ source: 'shop', cancellationKey: 'k', tenant: 'globex' }), any)).toEqual({ kind: 'key', source: 'shop', cancellationKey: 'k', tenant: 'globex' });
    expect(() => body({ source: 'shop', id: 'e1', tenant: 'Not/A/Tenant' })).toThrow();
  });
});

describe('cancelOutcomeLabels', () => {
  const op = (outcome: MessageCancel['operations'][number]['outcome']) => ({ operationKey: messageKey, recipient: 'a', channel: 'email', outcome });
  it('counts each operation, and pending only on a first cancel that waits for more', () => {
    expect(cancelOutcomeLabels({ operations: [op('cancelled'), op('in_flight')], pending: false, first: true, written: [] })).toEqual(['cancelled', 'in_flight']);
    expect(cancelOutcomeLabels({ operations: [], pending: true, first: true, written: [] })).toEqual(['pending']);
    expect(cancelOutcomeLabels({ operations: [], pending: true, first: false, written: [] })).toEqual([]);
  });
});
