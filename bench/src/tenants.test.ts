import { describe, expect, it } from 'vitest';
import { jainIndex, tenantsTable, type TenantsRow } from './tenants';

describe("Jain's index", () => {
  it('is 1 for an equal share and 1/n when one of n takes everything', () => {
    expect(jainIndex([5, 5, 5, 5])).toBe(1);
    expect(jainIndex([10, 0, 0, 0, 0])).toBeCloseTo(0.2, 10);
    // Half to one of ten, the rest evenly: what first in, first out gives the bench's skewed burst.
    expect(jainIndex([9, 1, 1, 1, 1, 1, 1, 1, 1, 1])).toBeCloseTo(0.36, 10);
  });
});

describe('tenantsTable', () => {
  it('reads each row against the one-tenant control, and leaves per-tenant cells empty where there are none', () => {
    const rows: TenantsRow[] = [
      { layout: 'one tenant', events: 100, sent: 100, lost: 0, duplicates: 0, perSecond: 500, p99: 40 },
      { layout: 'tenants', events: 100, sent: 100, lost: 0, duplicates: 0, perSecond: 450, p99: 42, jain: 0.98, lightP99: 20, heavyP99: 42 },
    ];
    const table = tenantsTable(rows, { events: 100, tenants: 10, heavyShare: 0.5, providerMs: 50 });
    expect(table).toContain('| one tenant | 500 | 1 | 40 |  |  |  | 100 | 0 | 0 |');
    expect(table).toContain('| tenants | 450 | 0.9 | 42 | 20 | 42 | 0.98 | 100 | 0 | 0 |');
    expect(table).toContain('the provider answers in 50 ms');
  });
});
