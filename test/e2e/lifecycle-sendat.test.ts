import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '@singleshot/runtime';
import { spawnApps, startHttpSink, startTestRedis, testConfig, waitForQueuesIdle, writeConfigFile, type AppProcess, type HttpSink, type TestRedis } from '@singleshot/test-harness';
import { prng } from '../chaos/prng';
import { testRuntime } from '../support/runtime';
import { ingestClient, opOf } from './support/lifecycle';

// Send-at across a Redis crash: the scheduled operations and their delayed
// jobs live in Redis only, so a SIGKILL of Redis (AOF, appendfsync always)
// while they wait must lose none, send none twice and send none early.
const EVENTS = Number(process.env.LIFECYCLE_SENDAT_EVENTS ?? 200);
const SEED = process.env.LIFECYCLE_SEED ?? String(Date.now());
const PRODUCERS = 16;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

describe('send-at under a Redis restart', () => {
  let redis: TestRedis;
  let sink: HttpSink;
  let fleet: AppProcess;
  let config: Record<string, unknown>;
  let base: string;
  let cleanup: () => void;

  beforeAll(async () => {
    redis = await startTestRedis({ appendfsync: 'always' });
    sink = await startHttpSink();
    config = testConfig({
      redisUrl: redis.url,
      routes: [{ name: 'reminders', match: { source: 'cal' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { text: 'Reminder {{data.n}}' } }],
      providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 2000 }] },
    });
    const written = writeConfigFile(config);
    cleanup = written.cleanup;
    fleet = spawnApps('ingest,decision,delivery', written.file);
    base = `http://127.0.0.1:${await fleet.metricsPort()}`;
  });

  afterAll(async () => {
    await fleet?.stop();
    await sink?.close();
    await redis?.destroy();
    cleanup?.();
  });

  it('an event due less than a second ahead is not sent before its time either', async () => {
    // The decision of a loaded pipeline can run this close to an event's sendAt:
    // "soon" must still mean "not before".
    const client = ingestClient(base);
    const ids = ['soon-300', 'soon-600', 'soon-900'];
    const due = new Map(ids.map((id) => [opOf('cal', id, `${id}@x.test`), Date.now() + Number(id.slice(5))]));
    await Promise.all(ids.map((id, i) => client.event({ id, source: 'cal', type: 'reminder', recipients: [`${id}@x.test`], data: { n: id }, sendAt: new Date([...due.values()][i] as number).toISOString() })));
    await sink.waitFor((s) => [...due.keys()].every((op) => s.accepted.has(op)), { timeoutMs: 30_000, what: 'the three soon events to be sent' });
    for (const [op, sendAt] of due) {
      expect(sink.accepted.get(op)?.count).toBe(1);
      expect(sink.requests.find((r) => r.idempotencyKey === op)!.receivedAt - sendAt, `lateness of ${op.slice(0, 12)}`).toBeGreaterThanOrEqual(0);
    }
  });

  it(`${EVENTS} events due 2–5 s ahead, Redis SIGKILLed and restarted on its AOF while they wait: each sent once, none early`, { timeout: 120_000 + EVENTS * 100 }, async () => {
    const rand = prng(SEED, 'send-at');
    const client = ingestClient(base);
    const due = new Map<string, number>();
    let next = 0;
    const producer = async () => {
      while (next < EVENTS) {
        const id = `at-${next++}`;
        const sendAt = Date.now() + rand.int(2000, 5000);
        await client.event({ id, source: 'cal', type: 'reminder', recipients: [`${id}@x.test`], data: { n: id }, sendAt: new Date(sendAt).toISOString() });
        due.set(opOf('cal', id, `${id}@x.test`), sendAt);
      }
    };
    await Promise.all(Array.from({ length: PRODUCERS }, producer));
    // Every one accepted; the last ones are due at least 2 s from now, so the crash falls while they wait.
    const waitingAtCrash = [...due.keys()].filter((op) => !sink.accepted.has(op)).length;
    expect(waitingAtCrash, 'events still waiting when Redis is killed').toBeGreaterThan(0);
    await redis.kill9();
    await redis.restart();

    await sink.waitFor((s) => [...due.keys()].every((op) => s.accepted.has(op)), { timeoutMs: 90_000, what: `all ${EVENTS} scheduled events to be sent` });
    const rt: Runtime = await testRuntime(config);
    try {
      await waitForQueuesIdle(rt.queues);
      const lateness: number[] = [];
      const problems: string[] = [];
      for (const [op, sendAt] of due) {
        const accepted = sink.accepted.get(op)?.count ?? 0;
        const first = sink.requests.find((r) => r.idempotencyKey === op);
        const status = (await rt.operations.get(op))?.status;
        if (accepted !== 1 || status !== 'sent') problems.push(`${op.slice(0, 12)}: accepted ${accepted}, status ${status}`);
        if (first && first.receivedAt < sendAt) problems.push(`${op.slice(0, 12)}: arrived ${sendAt - first.receivedAt} ms before its sendAt`);
        if (first) lateness.push(first.receivedAt - sendAt);
      }
      lateness.sort((a, b) => a - b);
      process.stdout.write(
        `\nsend-at: ${EVENTS} events, Redis SIGKILLed and restarted while ${waitingAtCrash} waited; lateness (receivedAt − sendAt) p50 ${percentile(lateness, 50)} ms, p95 ${percentile(lateness, 95)} ms, max ${lateness.at(-1)} ms\n`,
      );
      expect(problems).toEqual([]);
    } finally {
      await rt.close();
    }
  });
});
