import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyBuilder, LAYOUT_VERSION } from '@singleshot/store';
import { spawnApps, startHttpSink, startTestRedis, testConfig, waitUntil, writeConfigFile, type AppProcess, type HttpSink, type TestRedis } from '@singleshot/test-harness';

// A running process whose scripts meet a Redis layout newer than its code (a
// newer version stamped it while this one ran): the claim does nothing, the
// job goes back untouched, the process takes no more work and says so
// (/readyz 503 naming the layout, singleshot_layout_upgrade_required 1, one
// log line). A process that knows the layout then sends the notification, once,
// as its first attempt.
describe('a delivery process older than the Redis layout', () => {
  let redis: TestRedis;
  let admin: Redis;
  let sink: HttpSink;
  let cleanup: (() => void) | undefined;
  let front: AppProcess;
  let old: AppProcess;
  let newer: AppProcess | undefined;
  let configFile: string;
  const keys = new KeyBuilder('ss', 16);

  beforeAll(async () => {
    redis = await startTestRedis();
    admin = new Redis(redis.url, { maxRetriesPerRequest: null });
    sink = await startHttpSink();
    const written = writeConfigFile(
      testConfig({
        redisUrl: redis.url,
        routes: [{ name: 'orders', match: { source: 'shop' }, action: 'notify', channel: 'webhook', recipients: 'event' }],
        providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 2000 }] },
      }),
    );
    cleanup = written.cleanup;
    configFile = written.file;
    front = spawnApps('ingest,decision', configFile);
    old = spawnApps('delivery', configFile);
    await Promise.all([front.metricsPort(), old.metricsPort()]);
  });

  afterAll(async () => {
    await Promise.all([front?.stop(), old?.stop(), newer?.stop()]);
    admin?.disconnect();
    await sink?.close();
    await redis?.destroy();
    cleanup?.();
  });

  const post = async (id: string) =>
    fetch(`http://127.0.0.1:${await front.metricsPort()}/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id, source: 'shop', type: 'order.created', recipients: [`${id}@example.com`], data: {} }),
    });
  const requestsFor = (id: string) => sink.requests.filter((r) => r.recipient === `${id}@example.com`);
  /** The operation records (state hashes) of a recipient, read from Redis. */
  const operationsOf = async (id: string) => {
    const found: (Record<string, string> & { key: string })[] = [];
    for (const key of await admin.keys('ss:*:op:*')) {
      const h = await admin.hgetall(key);
      if (h.recipient === `${id}@example.com`) found.push({ ...h, key: key.slice(key.lastIndexOf(':') + 1) });
    }
    return found;
  };
  const readyz = async (proc: AppProcess) => {
    const res = await fetch(`http://127.0.0.1:${await proc.metricsPort()}/readyz`);
    return { status: res.status, body: (await res.json()) as { checks?: Record<string, string> } };
  };

  it('refuses, puts the job back untouched and stops taking work; a process that knows the layout sends it once', async () => {
    expect((await post('before')).status).toBe(202);
    await waitUntil(() => requestsFor('before').length === 1, 'the first event to be sent by the fleet as it is');
    expect(await old.metric('singleshot_layout_upgrade_required')).toBe(0);

    // A newer version stamps the layout while this delivery process runs.
    for (const key of keys.allLayouts()) await admin.set(key, String(LAYOUT_VERSION + 1));
    expect((await post('after')).status).toBe(202);
    await waitUntil(async () => (await old.metric('singleshot_layout_upgrade_required')) === 1, 'the old delivery process to say it met a newer layout');
    const ready = await readyz(old);
    expect(ready.status).toBe(503);
    expect(ready.body.checks?.layout).toBe(`upgrade required: Redis holds layout ${LAYOUT_VERSION + 1}`);
    expect(old.logs.filter((l) => l.event === 'layout_upgrade_required')).toHaveLength(1);
    // Nothing sent, no operation written: the claim refused before it touched anything.
    expect(requestsFor('after')).toEqual([]);
    expect(await operationsOf('after')).toEqual([]);

    // A process that knows the data's layout (here: the layout put back to this code's) takes the job over.
    for (const key of keys.allLayouts()) await admin.set(key, String(LAYOUT_VERSION));
    newer = spawnApps('delivery', configFile);
    await waitUntil(() => requestsFor('after').length > 0, 'the job put back to be sent by a process that knows the layout');
    await waitUntil(async () => (await operationsOf('after'))[0]?.status === 'sent', 'the operation to be recorded sent');
    const [op] = await operationsOf('after');
    expect(op).toMatchObject({ status: 'sent', attempts: '1' });
    expect(new Set(requestsFor('after').map((r) => r.idempotencyKey)).size).toBe(1);
    expect(sink.accepted.get(requestsFor('after')[0]?.idempotencyKey ?? '')?.count).toBe(1);
    // The deliver job (its id is the operation key) was started twice, by the old process and the new one, and
    // counted one attempt: the refusal put it back as it was, not as a failure, and the old process took it no more.
    // The job completes after the commit it carried: its counters are final only once it has.
    const jobKey = `{ssq}:deliver:${op?.key ?? ''}`;
    await waitUntil(async () => (await admin.hget(jobKey, 'finishedOn')) !== null, 'the deliver job to complete');
    const job = await admin.hgetall(jobKey);
    expect({ started: job.ats, made: job.atm, failedReason: job.failedReason }).toEqual({ started: '2', made: '1', failedReason: undefined });
    // The old process took nothing more: it still says it must be replaced.
    expect((await readyz(old)).status).toBe(503);
    expect(old.stderr()).not.toMatch(/^\s+at /m);
  });
});
