import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freePort,
  spawnApps,
  startHttpSink,
  startTestRedis,
  testConfig,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type HttpSink,
  type TestRedis,
} from '@singleshot/test-harness';

// A Redis that is up but refuses writes ("not now": OOM, READONLY, MISCONF…)
// must not be hammered: every loop of every process backs off. Measured with
// Redis's own count of error replies over a window while it refuses, with a
// fleet of three processes running and a producer retrying; then the fault
// clears and everything accepted is sent, once.
const WINDOW_MS = 10_000;
/** Refused commands per process and second, averaged over the window. */
const MAX_REFUSED_PER_PROCESS_PER_S = 50;
const PROCESSES = ['ingest', 'decision,render', 'delivery'] as const;

interface Fault {
  code: string;
  on(admin: Redis, redis: TestRedis): Promise<void>;
  off(admin: Redis, redis: TestRedis): Promise<void>;
}

const run = promisify(execFile);

/** Runs BGSAVE and waits for it to end; returns `rdb_last_bgsave_status`. */
async function bgsave(admin: Redis): Promise<string> {
  await waitUntil(async () => /rdb_bgsave_in_progress:0/.test(await admin.info('persistence')), 'no save in progress');
  await admin.bgsave();
  return waitUntil(async () => {
    const info = await admin.info('persistence');
    return /rdb_bgsave_in_progress:0/.test(info) ? /rdb_last_bgsave_status:(\w+)/.exec(info)?.[1] : undefined;
  }, 'the background save to end');
}

const FAULTS: Fault[] = [
  {
    // noeviction (the harness's policy) with no room: every write is refused.
    code: 'OOM',
    on: async (admin) => void (await admin.config('SET', 'maxmemory', '1')),
    off: async (admin) => void (await admin.config('SET', 'maxmemory', '0')),
  },
  {
    // A master demoted to a replica of a master that is not there (a failover seen from the old master).
    code: 'READONLY',
    on: async (admin) => void (await admin.replicaof('127.0.0.1', String(await freePort()))),
    off: async (admin) => void (await admin.replicaof('NO', 'ONE')),
  },
  {
    // A snapshot that cannot be written (its directory made immutable: root
    // ignores permissions) with save points set: Redis refuses writes until a
    // snapshot succeeds, as it does when the disk under its AOF is full.
    code: 'MISCONF',
    on: async (admin, redis) => {
      await admin.config('SET', 'save', '3600 1');
      await run('chattr', ['+i', redis.dir]);
      expect(await bgsave(admin)).toBe('err');
    },
    off: async (admin, redis) => {
      await run('chattr', ['-i', redis.dir]);
      expect(await bgsave(admin)).toBe('ok');
      await admin.config('SET', 'save', '');
    },
  },
];

async function errorReplies(admin: Redis): Promise<{ total: number; byCode: Record<string, number> }> {
  const stats = await admin.info('stats');
  const total = Number(/total_error_replies:(\d+)/.exec(stats)?.[1] ?? NaN);
  const byCode: Record<string, number> = {};
  for (const [, code, count] of (await admin.info('errorstats')).matchAll(/errorstat_([A-Z]+):count=(\d+)/g)) byCode[code as string] = Number(count);
  return { total, byCode };
}

describe('a Redis that refuses writes', () => {
  let redis: TestRedis;
  let admin: Redis;
  let sink: HttpSink;
  let cleanup: () => void;
  let fleet: AppProcess[];
  let base: string;

  beforeAll(async () => {
    redis = await startTestRedis({ appendfsync: 'everysec' });
    // The MISCONF fault makes the data directory immutable, on this machine.
    expect(redis.backend).toBe('binary');
    admin = new Redis(redis.url, { maxRetriesPerRequest: null });
    sink = await startHttpSink();
    const written = writeConfigFile(
      testConfig({
        redisUrl: redis.url,
        ingest: { port: 0, host: '127.0.0.1', enqueueTimeoutMs: 2000 },
        // The recovery sweeper runs often, so its backoff is measured too.
        delivery: { leaseMs: 3000, attempts: 10, backoffMs: [100, 200, 400], concurrency: 8, metricsPort: 0, sweepIntervalMs: 1000 },
        routes: [{ name: 'orders', match: { source: 'shop' }, action: 'notify', channel: 'webhook', recipients: 'event' }],
        providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 2000 }] },
      }),
    );
    cleanup = written.cleanup;
    fleet = PROCESSES.map((only) => spawnApps(only, written.file));
    await Promise.all(fleet.map((p) => p.metricsPort()));
    base = `http://127.0.0.1:${await fleet[0]!.metricsPort()}`;
  });

  afterAll(async () => {
    await Promise.all((fleet ?? []).map((p) => p.stop()));
    admin?.disconnect();
    await sink?.close();
    await redis?.destroy();
    cleanup?.();
  });

  const post = (id: string) =>
    fetch(`${base}/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id, source: 'shop', type: 'order.created', recipients: [`${id}@example.com`], data: {} }),
    });

  /** Each accepted event was sent, and once: one idempotency key per recipient, accepted once. */
  function notSentOnce(ids: readonly string[]): string[] {
    return ids.filter((id) => {
      // Addresses are compared in lower case, as the decision normalizes them.
      const keys = [...new Set(sink.requests.filter((r) => r.recipient === `${id}@example.com`.toLowerCase()).map((r) => r.idempotencyKey ?? ''))];
      return keys.length !== 1 || sink.accepted.get(keys[0] as string)?.count !== 1;
    });
  }

  for (const fault of FAULTS) {
    it(`${fault.code}: each process makes at most ${MAX_REFUSED_PER_PROCESS_PER_S} refused commands/s, reports it, and the fleet completes everything once after`, async () => {
      // Work queued when the fault begins: a slow provider keeps deliver jobs
      // waiting (about 9 s of work at 8 at once), and a worker whose fetch of a
      // waiting job is refused must not fetch again at once.
      sink.behave(() => ({ delayMs: 600, then: 'ok' }));
      const accepted = Array.from({ length: 120 }, (_, i) => `${fault.code}-before-${i}`);
      expect((await Promise.all(accepted.map(post))).map((r) => r.status)).toEqual(accepted.map(() => 202));

      await fault.on(admin, redis);
      try {
        // A producer that keeps trying (bounded: one post per 100 ms during the window).
        let producing = true;
        const answers: number[] = [];
        const retryAfter: (string | null)[] = [];
        const producer = (async () => {
          for (let i = 0; producing && i < 400; i++) {
            const res = await post(`${fault.code}-during-${i}`).catch(() => undefined);
            if (res) {
              answers.push(res.status);
              if (res.status === 503) retryAfter.push(res.headers.get('retry-after'));
              if (res.status === 202) accepted.push(`${fault.code}-during-${i}`);
            }
            await new Promise((r) => setTimeout(r, 100));
          }
        })();
        // Let every loop meet the refusal before the window opens.
        await new Promise((r) => setTimeout(r, 2000));
        const before = await errorReplies(admin);
        await new Promise((r) => setTimeout(r, WINDOW_MS));
        const after = await errorReplies(admin);
        const refusedPerS = (after.total - before.total) / (WINDOW_MS / 1000);
        const perProcess = refusedPerS / PROCESSES.length;
        const byCode = Object.fromEntries(Object.entries(after.byCode).map(([code, n]) => [code, n - (before.byCode[code] ?? 0)]).filter(([, n]) => (n as number) > 0));
        process.stdout.write(`${JSON.stringify({ event: 'refused_rate', fault: fault.code, windowMs: WINDOW_MS, processes: PROCESSES.length, refusedPerS, perProcessPerS: perProcess, byCode })}\n`);

        // The processes that meet the refusal say so: /readyz names it, the gauge
        // shows the wait. Ingest meets it on every try, delivery in its sweeper;
        // an idle decision process, blocked waiting for a job, may meet none.
        const readiness = await Promise.all(
          fleet.map(async (proc) => {
            const ready = await fetch(`http://127.0.0.1:${await proc.metricsPort()}/readyz`);
            return { status: ready.status, redis: ((await ready.json()) as { checks: Record<string, string> }).checks.redis };
          }),
        );
        const refusing = { status: 503, redis: `refusing: ${fault.code}` };
        expect(readiness[0]).toEqual(refusing);
        expect(readiness[2]).toEqual(refusing);
        expect([refusing, { status: 200, redis: 'ok' }]).toContainEqual(readiness[1]);
        expect(await fleet[2]!.metric('singleshot_redis_backoff_seconds')).toBeGreaterThan(0);
        producing = false;
        await producer;
        // Ingest kept answering: 503 with Retry-After, never a 2xx for an event it did not keep.
        expect(answers.filter((s) => s !== 503)).toEqual([]);
        expect(retryAfter.length).toBeGreaterThan(0);
        expect(retryAfter.every((v) => v !== null && Number(v) > 0)).toBe(true);
        expect(byCode[fault.code]).toBeGreaterThan(0);
        expect(perProcess).toBeLessThanOrEqual(MAX_REFUSED_PER_PROCESS_PER_S);
      } finally {
        await fault.off(admin, redis);
      }

      // The fault cleared: the fleet resumes without a restart and sends everything accepted, once.
      sink.behave(() => 'ok');
      await waitUntil(async () => (await post(`${fault.code}-after`)).status === 202, 'ingest to accept again', { timeoutMs: 30_000 });
      accepted.push(`${fault.code}-after`);
      await waitUntil(() => notSentOnce(accepted).length === 0, 'every accepted event to be sent', { timeoutMs: 60_000 });
      expect(notSentOnce(accepted)).toEqual([]);
      for (const proc of fleet) {
        await waitUntil(async () => (await fetch(`http://127.0.0.1:${await proc.metricsPort()}/readyz`)).status === 200, 'ready again', { timeoutMs: 30_000 });
      }
    });
  }
});
