import { describe, expect, it } from 'vitest';
import { FairReports } from './fair-reports';

describe('FairReports', () => {
  it('gathers starts and ends per partition and tenant until taken, counting every start for the window', () => {
    const r = new FairReports();
    r.started(0, 'acme', 'k1', true);
    r.started(0, 'globex', 'k2', false);
    r.started(1, 'acme', 'k3', true);
    r.ended(0, 'acme', 'k1');
    expect(r.take(0)).toEqual({ taken: 2, started: [{ tenant: 'acme', keys: ['k1'] }], ended: [{ tenant: 'acme', keys: ['k1'] }] });
    expect(r.take(0)).toEqual({ taken: 0, started: [], ended: [] });
    expect(r.take(1)).toEqual({ taken: 1, started: [{ tenant: 'acme', keys: ['k3'] }], ended: [] });
  });

  it('keeps a report whose move failed for the next, with what came meanwhile', () => {
    const r = new FairReports();
    r.started(0, 'acme', 'k1', true);
    const failed = r.take(0);
    r.ended(0, 'acme', 'k2');
    r.restore(0, failed);
    expect(r.take(0)).toEqual({ taken: 1, started: [{ tenant: 'acme', keys: ['k1'] }], ended: [{ tenant: 'acme', keys: ['k2'] }] });
  });
});
