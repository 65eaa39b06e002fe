import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '@singleshot/runtime';
import { spawnApps, startHttpSink, startTestBackend, testConfig, waitForQueuesIdle, waitUntil, writeConfigFile, type AppProcess, type HttpSink, type TestBackend } from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';
import { ingestClient, opOf } from './support/lifecycle';

// Quiet hours through real processes, with a window that is open now and
// closes at the next whole minute (UTC): a notification posted inside waits,
// visibly, and leaves once after the end; a required route does not wait; a
// recipient whose own zone is outside the window does not wait either.
const MINUTE = 60_000;
const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);

/** The window's end: the next whole minute, or the one after when fewer than 15 s are left (time for the checks inside). */
function windowEnd(now: number): number {
  const next = Math.ceil((now + 1) / MINUTE) * MINUTE;
  return next - now < 15_000 ? next + MINUTE : next;
}

describe('quiet hours end to end', () => {
  let redis: TestBackend;
  let sink: HttpSink;
  let fleet: AppProcess;
  let rt: Runtime;
  let base: string;
  let cleanup: () => void;
  let end: number;
  let quietHours: { start: string; end: string };

  beforeAll(async () => {
    redis = await startTestBackend();
    sink = await startHttpSink();
    // Worked out as late as possible, so a slow start leaves the margin to the end intact.
    end = windowEnd(Date.now());
    // Two hours wide, ending at `end`: covers now in UTC; in Asia/Dhaka (UTC+6, no DST) now is 6 h past it.
    quietHours = { start: hhmm(end - 120 * MINUTE), end: hhmm(end) };
    const template = { text: 'Hello {{data.n}}' };
    const config = testConfig({
      ...redis.config,
      routes: [
        { name: 'digest', match: { source: 'digest' }, action: 'notify', channel: 'webhook', recipients: 'event', template, quietHours: { ...quietHours, timezone: 'UTC' } },
        { name: 'reset', match: { source: 'auth' }, action: 'notify', channel: 'webhook', recipients: 'event', template, required: true, quietHours: { ...quietHours, timezone: 'UTC' } },
        { name: 'local', match: { source: 'local' }, action: 'notify', channel: 'webhook', recipients: 'event', template, quietHours: { ...quietHours, timezone: 'recipient' } },
      ],
      providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 2000 }] },
    });
    const written = writeConfigFile(config);
    cleanup = written.cleanup;
    fleet = spawnApps('ingest,decision,delivery', written.file);
    base = `http://127.0.0.1:${await fleet.metricsPort()}`;
    rt = await testRuntime(config);
  });

  afterAll(async () => {
    await fleet?.stop();
    await rt?.close();
    await sink?.close();
    await redis?.destroy();
    cleanup?.();
  });

  const journal = async (op: string) => {
    const record = await rt.operations.get(op);
    return (await rt.journal.forOperation(op, record?.journalIds ?? [])).map((e) => e.type);
  };

  it('inside a UTC window that ends at the next minute: deferred until the end and sent once; a required route and a recipient outside in their own zone go at once', { timeout: 150_000 }, async () => {
    process.stdout.write(`\nquiet hours ${quietHours.start}–${quietHours.end} UTC, ending in ${end - Date.now()} ms\n`);
    const client = ingestClient(base);
    await client.event({ id: 'q-1', source: 'digest', type: 'digest', recipients: ['night@x.test'], data: { n: 1 } });
    await client.event({ id: 'r-1', source: 'auth', type: 'password.reset', recipients: ['urgent@x.test'], data: { n: 2 } });
    await client.event({ id: 'l-1', source: 'local', type: 'digest', recipients: [{ address: 'dhaka@x.test', timezone: 'Asia/Dhaka' }, 'nozone@x.test'], data: { n: 3 } });
    const quiet = opOf('digest', 'q-1', 'night@x.test');
    const required = opOf('auth', 'r-1', 'urgent@x.test');
    const dhaka = opOf('local', 'l-1', 'dhaka@x.test');
    // No zone of its own: the route's fallback (UTC), inside the window.
    const fallback = opOf('local', 'l-1', 'nozone@x.test');
    const held = [quiet, fallback];

    for (const op of held) {
      await waitUntil(async () => (await rt.operations.get(op))?.waitingReason === 'quiet_hours', `${op.slice(0, 12)} to wait for quiet hours`, { timeoutMs: 20_000 });
    }
    for (const op of [required, dhaka]) {
      await waitUntil(async () => (await rt.operations.get(op))?.status === 'sent', `${op.slice(0, 12)} to be sent at once`, { timeoutMs: 20_000 });
      expect(sink.accepted.get(op)?.count).toBe(1);
      expect(await journal(op)).toEqual(['sent']);
    }
    // Sent while the window still held the others back.
    for (const op of held) {
      const record = await rt.operations.get(op);
      expect(record?.status).not.toBe('sent');
      expect(record?.waitingReason).toBe('quiet_hours');
      expect(record?.waitingUntil).toBe(end);
      expect(await journal(op)).toEqual(['deferred']);
      expect(sink.countFor(op)).toBe(0);
    }

    for (const op of held) {
      await waitUntil(async () => (await rt.operations.get(op))?.status === 'sent', `${op.slice(0, 12)} to be sent after the window`, { timeoutMs: end - Date.now() + 30_000, intervalMs: 200 });
    }
    await waitForQueuesIdle(rt.queues);
    for (const op of held) {
      expect(sink.accepted.get(op)?.count).toBe(1);
      expect(sink.requests.filter((r) => r.idempotencyKey === op).every((r) => r.receivedAt >= end)).toBe(true);
      expect(await journal(op)).toEqual(['deferred', 'sent']);
      expect((await rt.operations.get(op))?.waitingReason).toBeUndefined();
    }
    for (const op of [required, dhaka]) expect(sink.accepted.get(op)?.count).toBe(1);
  });
});
