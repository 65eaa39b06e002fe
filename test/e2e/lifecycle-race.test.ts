import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '@singleshot/runtime';
import { spawnApps, startHttpSink, startTestBackend, testConfig, waitForQueuesIdle, waitUntil, writeConfigFile, type AppProcess, type HttpSink, type TestBackend } from '@singleshot/test-harness';
import { prng } from '../chaos/prng';
import { testRuntime } from '../support/runtime';
import { ingestClient, opOf, outcomeTable, TERMINAL, type CancelAnswer } from './support/lifecycle';

// The race a producer meets when it cancels right after it posted: the cancel
// lands before the decision, between the decision and the claim, during the
// provider call, or after the send, while one of two delivery processes is
// SIGKILLed and restarted. Whatever the answer said must be what happened.
const OPS = Number(process.env.LIFECYCLE_RACE_OPS ?? 600);
const SEED = process.env.LIFECYCLE_SEED ?? String(Date.now());
/** Events in flight at once (each: post, a short pause, cancel). */
const PRODUCERS = 16;

interface Planned {
  id: string;
  recipients: string[];
  ops: string[];
}

describe('cancel racing the send', () => {
  let redis: TestBackend;
  let sink: HttpSink;
  let front: AppProcess;
  const deliveries: AppProcess[] = [];
  let configFile: string;
  let rt: Runtime;
  let base: string;
  let cleanup: () => void;

  beforeAll(async () => {
    redis = await startTestBackend();
    sink = await startHttpSink();
    // Mostly quick answers, some slow ones (cancels then land during the call);
    // all well inside the lease, so a request of a killed worker is settled by
    // the time the next claim looks it up.
    const delays = prng(SEED, 'sink');
    sink.behave(() => ({ delayMs: delays.chance(0.1) ? delays.int(100, 400) : delays.int(0, 30), then: 'ok' }));
    const config = testConfig({
      ...redis.config,
      routes: [{ name: 'orders', match: { source: 'shop' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { text: 'Order {{data.n}}' } }],
      providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 1500 }] },
    });
    const written = writeConfigFile(config);
    configFile = written.file;
    cleanup = written.cleanup;
    front = spawnApps('ingest,decision', configFile);
    deliveries.push(spawnApps('delivery', configFile), spawnApps('delivery', configFile));
    base = `http://127.0.0.1:${await front.metricsPort()}`;
    await Promise.all(deliveries.map((d) => d.metricsPort()));
    rt = await testRuntime(config);
  });

  afterAll(async () => {
    await Promise.all([front, ...deliveries].map((p) => p?.stop()));
    await rt?.close();
    await sink?.close();
    await redis?.destroy();
    cleanup?.();
  });

  it(`${OPS} operations, each event cancelled 0–50 ms after it was posted, one delivery process SIGKILLed: every answer holds`, { timeout: 120_000 + OPS * 60 }, async () => {
    const rand = prng(SEED, 'workload');
    const events: Planned[] = [];
    for (let n = 0, i = 0; n < OPS; i++) {
      const id = `race-${i}`;
      const recipients = Array.from({ length: Math.min(OPS - n, rand.int(1, 2)) }, (_, r) => `r${r}-${i}@x.test`);
      events.push({ id, recipients, ops: recipients.map((r) => opOf('shop', id, r)) });
      n += recipients.length;
    }
    const client = ingestClient(base);
    const answers = new Map<string, CancelAnswer>();
    const killAt = rand.int(Math.floor(events.length * 0.2), Math.floor(events.length * 0.6));
    let killed: Promise<void> | undefined;
    let next = 0;
    const producer = async (offsets: ReturnType<typeof prng>) => {
      while (next < events.length) {
        const index = next++;
        const event = events[index] as Planned;
        if (index === killAt) {
          // A random moment of the run: the victim is mid-work, some of its claims are held.
          killed = (async () => {
            const victim = deliveries.shift() as AppProcess;
            victim.signal('SIGKILL');
            await victim.exited();
            const restarted = spawnApps('delivery', configFile);
            deliveries.push(restarted);
            await restarted.metricsPort();
          })();
        }
        await client.event({ id: event.id, source: 'shop', type: 'order.created', recipients: event.recipients, data: { n: event.id } });
        await new Promise((r) => setTimeout(r, offsets.int(0, 50)));
        answers.set(event.id, await client.cancel({ source: 'shop', id: event.id, reason: 'changed my mind' }));
      }
    };
    await Promise.all(Array.from({ length: PRODUCERS }, (_, p) => producer(prng(SEED, `offsets-${p}`))));
    expect(killed, 'the kill happened during the run').toBeDefined();
    await killed;

    const allOps = events.flatMap((e) => e.ops);
    const statuses = new Map<string, string | undefined>();
    await waitUntil(
      async () => {
        const open = allOps.filter((op) => !TERMINAL.has(statuses.get(op) ?? ''));
        const read = await Promise.all(open.map(async (op) => [op, (await rt.operations.get(op))?.status] as const));
        for (const [op, status] of read) statuses.set(op, status);
        const left = read.filter(([, s]) => !TERMINAL.has(s ?? ''));
        if (left.length > 0) throw new Error(`${left.length} not terminal, e.g. ${JSON.stringify(left.slice(0, 3))}`);
        return true;
      },
      'every operation to be terminal',
      { timeoutMs: 90_000, intervalMs: 250 },
    );
    await waitForQueuesIdle(rt.queues, { timeoutMs: 60_000 });

    const rows: Array<{ answered: string; final: string }> = [];
    const problems: string[] = [];
    for (const event of events) {
      const answer = answers.get(event.id) as CancelAnswer;
      const listed = new Map(answer.operations.map((o) => [o.operationKey, o.outcome]));
      // A decided message lists every operation it made; an undecided one none.
      if (!answer.pending) expect([...listed.keys()].sort(), `operations listed for ${event.id}`).toEqual([...event.ops].sort());
      else expect(answer.operations, `operations listed for pending ${event.id}`).toEqual([]);
      for (const op of event.ops) {
        const answered = listed.get(op) ?? 'pending';
        const final = (await rt.operations.get(op))?.status ?? 'none';
        const accepted = sink.accepted.get(op)?.count ?? 0;
        const posted = sink.countFor(op);
        rows.push({ answered, final });
        const bad = (why: string) => problems.push(`${event.id} ${op.slice(0, 12)} answered ${answered}, final ${final}, accepted ${accepted}, posted ${posted}: ${why}`);
        if (accepted > 1) bad('sent more than once');
        if (final === 'cancelled' && accepted > 0) bad('cancelled and at the sink');
        if (final === 'sent' && accepted !== 1) bad('sent but not at the sink exactly once');
        switch (answered) {
          case 'cancelled':
          case 'pending':
            // Nothing claimed it before the cancel, and nothing may after: not one request.
            if (final !== 'cancelled' || posted !== 0) bad('should never reach the sink');
            break;
          case 'already_sent':
            if (final !== 'sent' || accepted !== 1) bad('should be at the sink exactly once');
            break;
          case 'in_flight':
            if (final !== 'sent' && final !== 'cancelled') bad('should end sent or cancelled');
            break;
          default:
            bad('no other answer fits a first cancel');
        }
      }
    }
    process.stdout.write(`\nlifecycle race: ${allOps.length} operations, ${events.length} events, seed ${SEED}\n${outcomeTable(rows)}`);
    expect(problems).toEqual([]);
  });
});
