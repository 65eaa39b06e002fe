import { sha256Hex as sha } from '@singleshot/core';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { DecideJobData, DeliverJobData } from '@singleshot/core';
import { routeSchema } from '@singleshot/config';
import { createLogger } from '@singleshot/observability';
import { decide, type DecideDeps } from './decide';

const data: DecideJobData = {
  messageKey: sha('shop:evt-1'),
  firstArrivalAt: 1_700_000_000_000,
  via: 'api',
  input: { kind: 'event', source: 'shop', eventId: 'evt-1', type: 'order.created', recipients: ['a@example.com', 'b@example.com'], data: { orderId: 'o-9' } },
};

/** Small object-literal deps that record every call in order. */
function fakeDeps(options: { routes?: unknown[]; failEnqueue?: Error } = {}) {
  const calls: string[] = [];
  const enqueued: DeliverJobData[][] = [];
  const decided: { messageKey: string; operationKeys: string[] }[] = [];
  const duplicates: Record<string, string>[] = [];
  const unrouted: Record<string, string>[] = [];
  const logLines: Record<string, unknown>[] = [];
  const decidedKeys = new Set<string>();
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logLines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      cb();
    },
  });
  const deps: DecideDeps = {
    routes: (options.routes ?? [{ name: 'orders', match: { source: 'shop' }, action: 'notify', channel: 'webhook' }]).map((r) => routeSchema.parse(r)),
    mailboxes: [],
    async enqueueDeliveries(jobs) {
      calls.push('enqueue');
      if (options.failEnqueue) throw options.failEnqueue;
      enqueued.push(jobs);
    },
    async recordDecision(messageKey, operations) {
      calls.push('markDecided');
      decided.push({ messageKey, operationKeys: operations.map((o) => o.operationKey) });
      const first = !decidedKeys.has(messageKey);
      decidedKeys.add(messageKey);
      return { first };
    },
    logger: createLogger({ app: 'test', level: 'warn', destination }),
    // The counter port is narrow in use (inc only); a prom-client Counter is far wider.
    metrics: {
      duplicatesSuppressed: {
        inc(labels: Record<string, string>) {
          duplicates.push(labels);
        },
      },
      unrouted: {
        inc(labels: Record<string, string>) {
          unrouted.push(labels);
        },
      },
    } as unknown as DecideDeps['metrics'],
  };
  return { deps, calls, enqueued, decided, duplicates, unrouted, logLines };
}

describe('decide', () => {
  it('records the decision before it enqueues the deliver jobs (a cancel then finds every operation that can be claimed)', async () => {
    const f = fakeDeps();
    const outcome = await decide(data, f.deps);
    expect(outcome).toEqual({ operations: 2, redelivered: false });
    expect(f.calls).toEqual(['markDecided', 'enqueue']);
    expect(f.enqueued).toHaveLength(1);
    const keys = f.enqueued[0]?.map((j) => j.operationKey);
    expect(keys).toEqual([
      sha(`${data.messageKey}:notify:a@example.com:webhook:v1`),
      sha(`${data.messageKey}:notify:b@example.com:webhook:v1`),
    ]);
    expect(f.decided).toEqual([{ messageKey: data.messageKey, operationKeys: keys }]);
    expect(f.duplicates).toEqual([]);
    expect(f.unrouted).toEqual([]);
  });

  it('a redelivered decide job re-enqueues the same operation keys and counts a duplicate', async () => {
    const f = fakeDeps();
    await decide(data, f.deps);
    const again = await decide(data, f.deps);
    expect(again).toEqual({ operations: 2, redelivered: true });
    expect(f.calls).toEqual(['markDecided', 'enqueue', 'markDecided', 'enqueue']);
    expect(f.enqueued[1]?.map((j) => j.operationKey)).toEqual(f.enqueued[0]?.map((j) => j.operationKey));
    expect(f.duplicates).toEqual([{ stage: 'decision', reason: 'redelivered' }]);
  });

  it('a failed enqueue fails the job after the record (ack after effect): its retry enqueues the same operations', async () => {
    const f = fakeDeps({ failEnqueue: new Error('ECONNREFUSED') });
    await expect(decide(data, f.deps)).rejects.toThrow('ECONNREFUSED');
    expect(f.calls).toEqual(['markDecided', 'enqueue']);
    expect(f.enqueued).toEqual([]);
  });

  it('an unrouted message is still marked decided, reported, counted and logged once', async () => {
    const f = fakeDeps({ routes: [{ name: 'billing', match: { source: 'billing' }, action: 'notify', channel: 'webhook' }] });
    const outcome = await decide(data, f.deps);
    expect(outcome).toEqual({ operations: 0, redelivered: false, unrouted: 'no_route' });
    expect(f.calls).toEqual(['markDecided', 'enqueue']);
    expect(f.enqueued).toEqual([[]]);
    expect(f.decided).toEqual([{ messageKey: data.messageKey, operationKeys: [] }]);
    expect(f.logLines).toHaveLength(1);
    expect(f.logLines[0]).toMatchObject({ level: 'warn', messageKey: data.messageKey, reason: 'no_route', source: 'shop' });
    expect(f.unrouted).toEqual([{ reason: 'no_route' }]);
    // A redelivery of the same unrouted message is a duplicate, not a second unrouted message.
    expect(await decide(data, f.deps)).toEqual({ operations: 0, redelivered: true, unrouted: 'no_route' });
    expect(f.unrouted).toHaveLength(1);
    expect(f.logLines).toHaveLength(1);
    expect(f.duplicates).toEqual([{ stage: 'decision', reason: 'redelivered' }]);
  });

  it('reports no_recipients when routes match but name nobody', async () => {
    const f = fakeDeps();
    const outcome = await decide({ ...data, input: { ...data.input, recipients: [] } as DecideJobData['input'] }, f.deps);
    expect(outcome).toEqual({ operations: 0, redelivered: false, unrouted: 'no_recipients' });
    expect(f.logLines[0]).toMatchObject({ reason: 'no_recipients' });
    expect(f.unrouted).toEqual([{ reason: 'no_recipients' }]);
  });
});
