import { describe, expect, it } from 'vitest';
import { eventMessageKey, tenantKey } from '@singleshot/core';
import { cancelTargetOf } from './cancel';

// `singleshot cancel --tenant T`: an operator reaches a tenant's event ids and
// cancellation keys by naming the tenant; without it, the default tenant's.
describe('singleshot cancel targets', () => {
  it("names the default tenant's event and key without --tenant", () => {
    expect(cancelTargetOf({ source: 'shop', id: 'e1' })).toEqual({ kind: 'message', messageKey: eventMessageKey('shop', 'e1') });
    expect(cancelTargetOf({ source: 'shop', key: 'k' })).toEqual({ kind: 'key', source: 'shop', cancellationKey: 'k' });
  });

  it("names the tenant's own with --tenant", () => {
    expect(cancelTargetOf({ source: 'shop', id: 'e1', tenant: 'acme' })).toEqual({ kind: 'message', messageKey: tenantKey('acme', eventMessageKey('shop', 'e1')) });
    expect(cancelTargetOf({ source: 'shop', key: 'k', tenant: 'acme' })).toEqual({ kind: 'key', source: 'shop', cancellationKey: 'k', tenant: 'acme' });
  });

  it('refuses a tenant that cannot be one, and --tenant with --message (a message key names its tenant already)', () => {
    expect(cancelTargetOf({ source: 'shop', id: 'e1', tenant: 'Not/One' })).toMatchObject({ kind: 'usage' });
    expect(cancelTargetOf({ message: 'a'.repeat(64), tenant: 'acme' })).toMatchObject({ kind: 'usage' });
  });
});
