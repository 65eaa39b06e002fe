import type { FairReport, TenantOperations } from '@singleshot/store';

/** What workers of this process said of one partition's moved operations, not yet told to its fair queue. */
export interface PendingReport extends FairReport {
  /** Moved operations started (the window's places). */
  taken: number;
}

/**
 * Gathers the starts and ends of moved operations per partition until the
 * next move of that partition carries them (one script call, whatever the
 * number of operations). A move that fails gives them back, so the next one
 * tells them: none is lost, at worst told late.
 */
export class FairReports {
  private readonly pending = new Map<number, { taken: number; started: Map<string, string[]>; ended: Map<string, string[]> }>();

  /** A moved operation started; `capped`: its key counts against its tenant's cap until it ends. */
  started(p: number, tenant: string, operationKey: string, capped: boolean): void {
    const r = this.of(p);
    r.taken++;
    if (capped) push(r.started, tenant, operationKey);
  }

  /** A capped tenant's moved operation ended for good: its place is free. */
  ended(p: number, tenant: string, operationKey: string): void {
    push(this.of(p).ended, tenant, operationKey);
  }

  /** Takes what is pending for partition `p` (and forgets it). */
  take(p: number): PendingReport {
    const r = this.pending.get(p);
    this.pending.delete(p);
    if (!r) return { taken: 0, started: [], ended: [] };
    return { taken: r.taken, started: listOf(r.started), ended: listOf(r.ended) };
  }

  /** Gives back a report whose move failed, to go with the next. */
  restore(p: number, report: PendingReport): void {
    const r = this.of(p);
    r.taken += report.taken;
    for (const { tenant, keys } of report.started) for (const key of keys) push(r.started, tenant, key);
    for (const { tenant, keys } of report.ended) for (const key of keys) push(r.ended, tenant, key);
  }

  private of(p: number) {
    let r = this.pending.get(p);
    if (!r) this.pending.set(p, (r = { taken: 0, started: new Map(), ended: new Map() }));
    return r;
  }
}

function push(map: Map<string, string[]>, tenant: string, key: string): void {
  const list = map.get(tenant);
  if (list) list.push(key);
  else map.set(tenant, [key]);
}

function listOf(map: Map<string, string[]>): TenantOperations[] {
  return [...map].map(([tenant, keys]) => ({ tenant, keys }));
}
