import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIFECYCLE_EVENTS, TRANSITIONS, transitionOf, type LifecycleEvent, type LifecycleFrom, type LifecycleGuard, type Transition } from '@singleshot/core';
import { startTestRedis, waitUntil, type TestRedis } from '@singleshot/test-harness';
import { Cancellations } from './cancellations';
import { createRedis, type RedisClient } from './connection';
import { KeyBuilder } from './keys';
import { replayOperationState } from './operation-replay';
import { OperationStore } from './operation-store';
import { Suppressions } from './suppressions';

// The transition table of libs/core/src/lifecycle.ts against the scripts that
// implement it, on a real Redis: every step from every status (and under each
// condition that can hold there) is run on a fresh operation, and the status
// and journal entry it leaves must be the table's row, or, with no row, the
// status as it was and no entry. Every row must be reached by some case.
let server: TestRedis;
let redis: RedisClient;
const keys = new KeyBuilder('lt', 2);
const clock = 1_700_000_000_000;
const now = () => clock;
const retentionMs = 86_400_000;
let ops: OperationStore;
let cancels: Cancellations;
let suppressions: Suppressions;
let serial = 0;

interface Op {
  operationKey: string;
  messageKey: string;
  recipient: string;
  channel: string;
}

/** A fresh operation of its own recipient, so a suppression touches it alone. */
function freshOp(): Op {
  serial += 1;
  return { operationKey: `f${serial.toString(16).padStart(63, '0')}`, messageKey: 'b'.repeat(64), recipient: `r${serial}@example.com`, channel: 'email' };
}

const claim = (op: Op, leaseMs = 60_000) => ops.claim({ ...op, owner: 'w', leaseMs });

async function commit(op: Op, fence: string, outcome: 'sent' | 'in_doubt' | 'failed' | 'dead' | 'suppressed' | 'cancelled' | 'released', releaseTo?: 'pending' | 'in_doubt' | 'failed') {
  return ops.commit({ ...op, fence, outcome, provider: 'p', ...(outcome === 'sent' ? { externalId: 'x' } : {}), ...(releaseTo ? { releaseTo } : {}), ...(outcome === 'dead' || outcome === 'suppressed' ? { reason: 'test' } : {}) });
}

/** A claim that must succeed: the setups below are built from real steps only. */
async function claimed(op: Op, leaseMs?: number): Promise<string> {
  const c = await claim(op, leaseMs);
  if (c.kind !== 'go') throw new Error(`setup claim answered ${c.kind}`);
  return c.fence;
}

/** Brings a fresh operation to `from`; returns the fence of its last claim ('0' when none). */
async function reach(op: Op, from: LifecycleFrom, when: LifecycleGuard | undefined): Promise<string> {
  switch (from) {
    case 'absent':
      return '0';
    case 'scheduled':
      await ops.schedule(op, clock - 1, 'send_at', 1_000);
      return '0';
    case 'cancelled':
      await cancels.cancelOperation(op, { by: 't', reason: 'setup' });
      return '0';
    case 'sending': {
      if (when === 'lease_over') {
        const fence = await claimed(op, 1);
        await waitUntil(async () => (await redis.exists(keys.lock(op.operationKey))) === 0, 'the 1 ms lease to run out', { timeoutMs: 5_000, intervalMs: 2 });
        return fence;
      }
      const fence = await claimed(op);
      if (when === 'cancel_marked') await cancels.cancelOperation(op, { by: 't', reason: 'in flight' });
      return fence;
    }
    default: {
      const fence = await claimed(op);
      if (when === 'cancel_marked') await cancels.cancelOperation(op, { by: 't', reason: 'in flight' });
      if (from === 'pending') await commit(op, fence, 'released', 'pending');
      else await commit(op, fence, from === 'sent' ? 'sent' : from);
      // Still the current fence: a commit repeated by the holder that ended
      // the attempt (its answer lost) must change nothing either.
      return fence;
    }
  }
}

/** The limit a claim under `over_limit` is told the recipient is over (read before the claim in delivery). */
const OVER = { scope: 'global', count: 2, max: 2, note: 'global: 2 of 2 per 3600s; a slot frees in 60s' };

/** Runs one step; for a claim, whether it took the lock. */
async function step(op: Op, event: LifecycleEvent, fence: string, when: LifecycleGuard | undefined): Promise<{ claimed?: boolean }> {
  const limit = when === 'over_limit' ? { limit: OVER } : {};
  switch (event) {
    case 'schedule':
      await ops.schedule(op, clock + 60_000, 'send_at', 1_000);
      return {};
    case 'wait':
      await ops.claim({ ...op, owner: 'w', leaseMs: 30_000, hold: { reason: 'document', untilMs: clock + 1_000, waitingFor: 'document:d', waitingKey: 'd' }, ...limit });
      return {};
    case 'claim':
      return { claimed: (await ops.claim({ ...op, owner: 'w', leaseMs: 60_000, ...limit })).kind === 'go' };
    case 'cancel':
      await cancels.cancelOperation(op, { by: 't', reason: 'step' });
      return {};
    case 'replay':
      await replayOperationState(redis, keys, { operationKey: op.operationKey, by: 't', via: 'test' }, { retentionMs, now });
      return {};
    case 'release_pending':
    case 'release_in_doubt':
    case 'release_failed':
      await commit(op, fence, 'released', event.slice('release_'.length) as 'pending' | 'in_doubt' | 'failed');
      return {};
    default:
      await commit(op, fence, event.slice('commit_'.length) as 'sent' | 'in_doubt' | 'failed' | 'dead' | 'suppressed' | 'cancelled');
      return {};
  }
}

async function observe(op: Op): Promise<{ status: LifecycleFrom; journal: string[] }> {
  const status = (await ops.get(op.operationKey))?.status ?? 'absent';
  const entries = await redis.xrange(keys.journalOf(op.operationKey), '-', '+');
  const journal = entries.map(([, fields]) => Object.fromEntries(fields.reduce<[string, string][]>((pairs, v, i) => (i % 2 ? pairs : [...pairs, [v, fields[i + 1] ?? '']]), []))).filter((e) => e.op === op.operationKey).map((e) => e.type ?? '');
  return { status, journal };
}

/**
 * The conditions that can hold for an operation in `from`, reached by real
 * steps; `over_limit` is the claim's input rather than the state's, so it is
 * tried from every status (only a first claim that would take the lock ends).
 */
function guardsOf(from: LifecycleFrom): (LifecycleGuard | undefined)[] {
  if (from === 'sending') return [undefined, 'recipient_suppressed', 'cancel_marked', 'lease_over', 'over_limit'];
  if (from === 'in_doubt') return [undefined, 'recipient_suppressed', 'cancel_marked', 'over_limit'];
  return [undefined, 'recipient_suppressed', 'over_limit'];
}

const FROM: readonly LifecycleFrom[] = ['absent', 'pending', 'scheduled', 'sending', 'sent', 'in_doubt', 'failed', 'dead', 'suppressed', 'cancelled'];
const CASES = FROM.flatMap((from) => guardsOf(from).flatMap((when) => LIFECYCLE_EVENTS.map((event) => ({ from, when, event }))));

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
  ops = new OperationStore(redis, keys, { retentionMs, now });
  cancels = new Cancellations(redis, keys, { retentionMs, now });
  suppressions = new Suppressions(redis, keys, { retentionMs, now });
});

afterAll(async () => {
  redis.disconnect();
  await server.destroy();
});

describe('the transition table against the scripts', () => {
  const reached = new Set<Transition>();

  it.each(CASES)('$event from $from (condition: $when)', async ({ from, when, event }) => {
    const op = freshOp();
    const fence = await reach(op, from, when);
    if (when === 'recipient_suppressed') await suppressions.add({ channel: op.channel, recipient: op.recipient, reason: 'bounce', origin: 'operator', by: 't' });
    const before = await observe(op);
    expect(before.status).toBe(from);
    const { claimed: took } = await step(op, event, fence, when);
    const after = await observe(op);
    const row = (when ? transitionOf(from, event, when) : undefined) ?? transitionOf(from, event);
    const added = after.journal.slice(before.journal.length);
    if (row) {
      reached.add(row);
      expect({ status: after.status, journal: added }).toEqual({ status: row.to, journal: row.journal ? [row.journal] : [] });
      if (event === 'claim') expect(took).toBe(row.to === 'sending');
    } else {
      expect({ status: after.status, journal: added }).toEqual({ status: from, journal: [] });
      if (event === 'claim') expect(took).toBe(false);
    }
  });

  it('reaches every row of the table', () => {
    expect(TRANSITIONS.filter((t) => !reached.has(t)).map((t) => `${t.from} ${t.event} ${t.when ?? ''}`)).toEqual([]);
  });

  it('a claim before a scheduled time changes nothing (early)', async () => {
    const op = freshOp();
    await ops.schedule(op, clock + 60_000, 'send_at', 1_000);
    expect(await claim(op)).toMatchObject({ kind: 'wait', reason: 'scheduled' });
    // Over a limit too: its limit is answered once it is due.
    expect(await ops.claim({ ...op, owner: 'w', leaseMs: 60_000, limit: OVER })).toMatchObject({ kind: 'wait', reason: 'scheduled' });
    expect(await observe(op)).toEqual({ status: 'scheduled', journal: ['scheduled'] });
  });
});
