import { afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '@singleshot/test-harness';
import { keepLease, type LeaseKeeper } from './lease-keeper';

// leaseMs 300 → the keeper extends every 100 ms.
const LEASE_MS = 300;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const within = { timeoutMs: 10_000, intervalMs: 10 };

let keepers: LeaseKeeper[] = [];
afterEach(() => {
  for (const k of keepers) k.stop();
  keepers = [];
});

function start(input: Parameters<typeof keepLease>[0]): LeaseKeeper {
  const keeper = keepLease(input);
  keepers.push(keeper);
  return keeper;
}

describe('keepLease', () => {
  it('aborts the signal once an extension is refused', async () => {
    const lost: string[] = [];
    let calls = 0;
    const keeper = start({
      leaseMs: LEASE_MS,
      extend: async () => {
        calls++;
        return false;
      },
      onLost: (reason) => lost.push(reason),
    });
    expect(keeper.lost()).toBe(false);
    await waitUntil(() => keeper.signal.aborted, 'signal aborted', within);
    expect(keeper.lost()).toBe(true);
    expect(String((keeper.signal.reason as Error).message)).toMatch(/lease lost/);
    expect(calls).toBeGreaterThanOrEqual(1);
    // Later refusals do not abort or report again.
    const seen = calls;
    await waitUntil(() => calls >= seen + 2, 'more extension attempts', within);
    expect(lost).toHaveLength(1);
  });

  it('keeps the lease while extensions succeed, well past the first lease', async () => {
    let clock = 1_000;
    let calls = 0;
    const keeper = start({
      leaseMs: LEASE_MS,
      now: () => clock,
      extend: async () => {
        calls++;
        // Each extension happens "later": without them the lease would have run out.
        clock += 200;
        return true;
      },
    });
    await waitUntil(() => calls >= 5, 'five extensions', within);
    expect(keeper.signal.aborted).toBe(false);
    expect(keeper.lost()).toBe(false);
    // The lease runs from the start of the last extension.
    expect(keeper.remainingMs()).toBeGreaterThan(0);
    expect(keeper.remainingMs()).toBeLessThanOrEqual(LEASE_MS);
  });

  it('when extend throws, aborts only once the lease has run out', async () => {
    let clock = 0;
    let calls = 0;
    const lost: string[] = [];
    const keeper = start({
      leaseMs: LEASE_MS,
      now: () => clock,
      extend: async () => {
        calls++;
        throw new Error('ECONNREFUSED');
      },
      onLost: (reason) => lost.push(reason),
    });
    await waitUntil(() => calls >= 3, 'failed extensions', within);
    // Redis unreachable, but the lease is still ours: keep working.
    expect(keeper.signal.aborted).toBe(false);
    expect(keeper.remainingMs()).toBe(LEASE_MS);
    clock = LEASE_MS - 1;
    const before = calls;
    await waitUntil(() => calls >= before + 2, 'more failed extensions', within);
    expect(keeper.signal.aborted).toBe(false);
    clock = LEASE_MS;
    await waitUntil(() => keeper.signal.aborted, 'signal aborted after the lease ran out', within);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toMatch(/ran out/);
  });

  it('a successful extension after failures moves the deadline', async () => {
    let clock = 0;
    let mode: 'throw' | 'ok' = 'throw';
    let calls = 0;
    const keeper = start({
      leaseMs: LEASE_MS,
      now: () => clock,
      extend: async () => {
        calls++;
        if (mode === 'throw') throw new Error('timeout');
        return true;
      },
    });
    await waitUntil(() => calls >= 2, 'failed extensions', within);
    clock = 200;
    mode = 'ok';
    await waitUntil(() => keeper.remainingMs() === LEASE_MS, 'lease extended from t=200', within);
    mode = 'throw';
    clock = 450; // past the first lease (300), within the extended one (500)
    const before = calls;
    await waitUntil(() => calls >= before + 2, 'more failed extensions', within);
    expect(keeper.signal.aborted).toBe(false);
    clock = 500;
    await waitUntil(() => keeper.signal.aborted, 'signal aborted at the extended deadline', within);
  });

  it('never runs two extensions at once', async () => {
    let calls = 0;
    let release: (ok: boolean) => void = () => undefined;
    const keeper = start({
      leaseMs: LEASE_MS,
      // A frozen clock: the lease never runs out here, so only the overlap is tested.
      now: () => 0,
      extend: () => {
        calls++;
        return new Promise<boolean>((resolve) => (release = resolve));
      },
    });
    await waitUntil(() => calls === 1, 'first extension', within);
    await sleep(4 * 100); // four ticks while the first call hangs
    expect(calls).toBe(1);
    release(true);
    await waitUntil(() => calls === 2, 'next extension after the first settled', within);
    expect(keeper.lost()).toBe(false);
  });

  it('after stop, a refusal that arrives late does not abort, and no further extension runs', async () => {
    let calls = 0;
    let release: (ok: boolean) => void = () => undefined;
    const keeper = start({
      leaseMs: LEASE_MS,
      extend: () => {
        calls++;
        return new Promise<boolean>((resolve) => (release = resolve));
      },
    });
    await waitUntil(() => calls === 1, 'first extension', within);
    keeper.stop();
    release(false);
    await sleep(4 * 100);
    expect(keeper.signal.aborted).toBe(false);
    expect(calls).toBe(1);
  });

  // An extension that never settles (the `client` Redis connection queues
  // commands while Redis is away) must not hide that the lease ran out.
  it('aborts once the lease ran out while an extension hangs', async () => {
    let clock = 0;
    let calls = 0;
    const keeper = start({
      leaseMs: LEASE_MS,
      now: () => clock,
      extend: () => {
        calls++;
        return new Promise<boolean>(() => undefined);
      },
    });
    await waitUntil(() => calls === 1, 'first extension', within);
    clock = LEASE_MS;
    await waitUntil(() => keeper.signal.aborted, 'signal aborted while the extension hangs', { timeoutMs: 2_000, intervalMs: 10 });
  });

  it('cancels a call context through its callback and its signal once the lease is lost', async () => {
    const keeper = start({ leaseMs: LEASE_MS, extend: async () => false });
    const ctx = keeper.callContext(1_000);
    expect(ctx.timeoutMs).toBe(1_000);
    const reasons: Error[] = [];
    const listener = (reason: Error) => reasons.push(reason);
    ctx.cancel?.onCancel(listener);
    expect(ctx.cancel?.cancelled()).toBeUndefined();
    await waitUntil(() => reasons.length === 1, 'the callback to run', within);
    expect(reasons[0]?.message).toMatch(/lease lost/);
    expect(ctx.cancel?.cancelled()).toBe(reasons[0]);
    // A signal asked for after the loss is already aborted, with the same reason.
    expect(ctx.signal.aborted).toBe(true);
    expect(ctx.signal.reason).toBe(reasons[0]);
    // A listener set after the loss runs at once.
    const late: Error[] = [];
    ctx.cancel?.onCancel((reason) => late.push(reason));
    expect(late).toEqual([reasons[0]]);
  });

  it('a removed callback is not called', async () => {
    const keeper = start({ leaseMs: LEASE_MS, extend: async () => false });
    const ctx = keeper.callContext(1_000);
    let called = 0;
    const listener = () => called++;
    ctx.cancel?.onCancel(listener);
    ctx.cancel?.offCancel(listener);
    await waitUntil(() => keeper.lost(), 'the lease to be lost', within);
    expect(called).toBe(0);
  });
});
