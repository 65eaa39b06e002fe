import { describe, expect, it } from 'vitest';
import type { DeliverJobData } from '@singleshot/core';
import { createLogger } from '@singleshot/observability';
import { deliverJob } from '@singleshot/test-jobs';
import { CallLimit } from './call-limit';
import { deliverBatch, type BatchDeps } from './deliver-batch';
import type { DeliverOutcome } from './deliver-types';

// The batch handler's bookkeeping with the per-operation attempt stubbed out
// (the attempt itself, on a real Redis and real workers, is in
// test/e2e/delivery-batch.test.ts): what gets a follow-up job, in which
// order relative to completing, and what an invalid batch leaves.
const logger = createLogger({ app: 'test', level: 'silent' });

function harness(outcomes: Map<string, DeliverOutcome | Error>) {
  const events: string[] = [];
  const deps: BatchDeps = {
    deliverOne: async (op) => {
      const o = outcomes.get(op.operationKey) ?? { kind: 'sent', provider: 'p', externalId: 'x', reconciled: false };
      events.push(`deliver ${op.recipient}`);
      if (o instanceof Error) throw o;
      return o;
    },
    followUp: async (op, delayMs) => void events.push(`followUp ${op.recipient} ${delayMs}`),
    invalid: async (entry) => {
      events.push(`invalid ${entry.operationKey}`);
      return { kind: 'dead', reason: 'invalid_payload' };
    },
    replicate: async (keys) => void events.push(`replicate ${keys.length}`),
    logger,
  };
  return { deps, events };
}

const job = (data: unknown) => ({ id: 'b1', data, attemptsMade: 0, queueQualifiedName: '{ssq}:deliver' });
const ops = (n: number, tag: string): DeliverJobData[] => Array.from({ length: n }, (_, i) => deliverJob(`${tag}-${i}`));

describe('deliverBatch', () => {
  it('gives retry, conflict and waiting operations their own job before replicating and completing', async () => {
    const list = ops(4, 'mix');
    const outcomes = new Map<string, DeliverOutcome>([
      [list[1]!.operationKey, { kind: 'retry', delayMs: 1000, reason: 'HTTP_503' }],
      [list[2]!.operationKey, { kind: 'conflict', delayMs: 700 }],
      [list[3]!.operationKey, { kind: 'duplicate' }],
    ]);
    const { deps, events } = harness(outcomes);
    const outcome = await deliverBatch(job({ operations: list }), deps);
    expect(outcome).toEqual({ kind: 'batch', operations: 4, outcomes: { sent: 1, retry: 1, conflict: 1, duplicate: 1 }, followUps: 2 });
    expect(events.filter((e) => e.startsWith('followUp')).sort()).toEqual([`followUp ${list[1]!.recipient} 1000`, `followUp ${list[2]!.recipient} 700`]);
    expect(events.at(-1)).toBe('replicate 4');
  });

  it('throws after every operation settled when Redis failed for one, follow-ups added first', async () => {
    const list = ops(3, 'fail');
    const down = Object.assign(new Error('connection lost'), { code: 'ECONNRESET' });
    const { deps, events } = harness(
      new Map<string, DeliverOutcome | Error>([
        [list[0]!.operationKey, down],
        [list[1]!.operationKey, { kind: 'retry', delayMs: 100, reason: 'HTTP_503' }],
      ]),
    );
    await expect(deliverBatch(job({ operations: list }), deps)).rejects.toBe(down);
    expect(events.filter((e) => e.startsWith('deliver'))).toHaveLength(3);
    expect(events).toContain(`followUp ${list[1]!.recipient} 100`);
    expect(events.some((e) => e.startsWith('replicate'))).toBe(false);
  });

  it('an invalid batch: each parsable operation is handled, each other one recorded dead', async () => {
    const [good] = ops(1, 'inv');
    const bad = { ...good!, operationKey: 'f'.repeat(64), recipient: '' };
    const { deps, events } = harness(new Map());
    const outcome = await deliverBatch(job({ operations: [good, bad, 42] }), deps);
    expect(outcome.outcomes).toEqual({ sent: 1, dead: 2 });
    expect(events).toContain(`deliver ${good!.recipient}`);
    expect(events).toContain(`invalid ${'f'.repeat(64)}`);
    expect(events).toContain('invalid b1-2');
  });

  it('a batch without an operations list is one invalid job', async () => {
    const { deps, events } = harness(new Map());
    const outcome = await deliverBatch(job({ nope: true }), deps);
    expect(outcome).toMatchObject({ operations: 1, outcomes: { dead: 1 } });
    expect(events).toContain('invalid b1-0');
  });
});

describe('CallLimit', () => {
  it('never runs more than its maximum at once, and runs everything', async () => {
    const limit = new CallLimit(2);
    let running = 0;
    let peak = 0;
    const gates: Array<() => void> = [];
    const tasks = Array.from({ length: 5 }, (_, i) =>
      limit.run(async () => {
        running++;
        peak = Math.max(peak, running);
        await new Promise<void>((r) => gates.push(r));
        running--;
        return i;
      }),
    );
    for (let released = 0; released < 5; released++) {
      await waitFor(() => gates.length > 0);
      expect(limit.running).toBeLessThanOrEqual(2);
      gates.shift()!();
    }
    expect(await Promise.all(tasks)).toEqual([0, 1, 2, 3, 4]);
    expect(peak).toBe(2);
    expect(limit.running).toBe(0);
  });
});

async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((r) => setImmediate(r));
  if (!check()) throw new Error('condition not reached');
}
