import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '@singleshot/runtime';
import { spawnApps, startHttpSink, startTestBackend, testConfig, waitForQueuesIdle, waitUntil, writeConfigFile, type AppProcess, type HttpSink, type TestBackend } from '@singleshot/test-harness';
import { prng } from '../chaos/prng';
import { testRuntime } from '../support/runtime';
import { ingestClient } from './support/lifecycle';
import { appearances, sinkDigests } from './support/digests';
import { oneEffectProblems } from './support/one-effect';

// Many events, one message per window, exactly once, while decision and
// delivery processes are SIGKILLed at random. DIGEST_CHAOS_EVENTS sets the
// size (default: the full 1,000 events); DIGEST_SEED replays a run.
const EVENTS = Number(process.env.DIGEST_CHAOS_EVENTS ?? 1000);
const RECIPIENTS = 50;
const WINDOWS = 3;
const WINDOW_MS = 3_000;
const SEED = process.env.DIGEST_SEED ?? String(Date.now());

describe('digests under SIGKILL', () => {
  let redis: TestBackend;
  let sink: HttpSink;
  let front: AppProcess;
  const decisions: AppProcess[] = [];
  const deliveries: AppProcess[] = [];
  let configFile: string;
  let rt: Runtime;
  let cleanup: () => void;

  beforeAll(async () => {
    redis = await startTestBackend();
    sink = await startHttpSink();
    const delays = prng(SEED, 'sink');
    sink.behave(() => ({ delayMs: delays.int(0, 40), then: 'ok' }));
    const config = testConfig({
      ...redis.config,
      routes: [{ name: 'stock', match: { source: 'stock' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { text: '{{count}}' }, digest: { window: '3s', mode: 'aligned' } }],
      providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 1500 }] },
    });
    const written = writeConfigFile(config);
    configFile = written.file;
    cleanup = written.cleanup;
    front = spawnApps('ingest', configFile);
    decisions.push(spawnApps('decision', configFile), spawnApps('decision', configFile));
    deliveries.push(spawnApps('delivery', configFile), spawnApps('delivery', configFile));
    await Promise.all([...decisions, ...deliveries].map((p) => p.metricsPort()));
    rt = await testRuntime(config);
  });

  afterAll(async () => {
    await Promise.all([front, ...decisions, ...deliveries].map((p) => p?.stop()));
    await rt?.close();
    await sink?.close();
    await redis?.destroy();
    cleanup?.();
  });

  it(`${EVENTS} events for ${RECIPIENTS} recipients, each posted 3 times at once, over ${WINDOWS} windows, decision and delivery SIGKILLed: one digest per window, every event once`, { timeout: 240_000 }, async () => {
    const rand = prng(SEED, 'workload');
    const client = ingestClient(`http://127.0.0.1:${await front.metricsPort()}`);
    const events = Array.from({ length: EVENTS }, (_, i) => ({ id: `ev-${i}`, recipient: `r${rand.int(0, RECIPIENTS - 1)}@x.test` }));
    let kills = 0;
    let stop = false;
    const restartOne = async (pool: AppProcess[], app: string) => {
      const victim = pool.splice(rand.int(0, pool.length - 1), 1)[0] as AppProcess;
      victim.signal('SIGKILL');
      await victim.exited();
      kills++;
      const fresh = spawnApps(app, configFile);
      pool.push(fresh);
      await fresh.metricsPort();
    };
    const killer = (async () => {
      while (!stop) {
        await new Promise((r) => setTimeout(r, rand.int(400, 1200)));
        if (stop) break;
        const decision = rand.chance(0.5);
        await restartOne(decision ? decisions : deliveries, decision ? 'decision' : 'delivery');
      }
    })();
    const perWindow = Math.ceil(EVENTS / WINDOWS);
    for (let w = 0; w < WINDOWS; w++) {
      // Start at the beginning of an aligned window, so each phase mostly falls in one.
      await new Promise((r) => setTimeout(r, WINDOW_MS - (Date.now() % WINDOW_MS) + 50));
      const phase = events.slice(w * perWindow, (w + 1) * perWindow);
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < phase.length) {
            const e = phase[next++] as (typeof events)[number];
            await Promise.all([0, 1, 2].map(() => client.event({ id: e.id, source: 'stock', type: 'moved', recipients: [e.recipient], data: { n: e.id } })));
          }
        }),
      );
    }
    stop = true;
    await killer;
    const ids = events.map((e) => e.id);
    await waitUntil(
      () => {
        const seen = appearances(sinkDigests(sink));
        const missing = ids.filter((id) => !seen.has(id));
        if (missing.length > 0) throw new Error(`${missing.length} events in no digest yet, e.g. ${missing.slice(0, 3).join(', ')}`);
        return true;
      },
      'every event in a digest at the sink',
      { timeoutMs: 150_000, intervalMs: 250 },
    );
    await waitForQueuesIdle(rt.queues, { timeoutMs: 60_000 });
    await waitUntil(async () => (await rt.queues.digest.getJobCounts('waiting', 'active', 'delayed')).delayed === 0, 'the digest queue idle', { timeoutMs: 30_000 });

    const digests = sinkDigests(sink);
    const seen = appearances(digests);
    const perKey = new Map<string, number>();
    for (const d of digests) perKey.set(`${d.recipient}|${d.key}|${d.closeAt}`, (perKey.get(`${d.recipient}|${d.key}|${d.closeAt}`) ?? 0) + 1);
    const windows = new Set(digests.map((d) => d.closeAt)).size;
    process.stdout.write(`\ndigest chaos (seed ${SEED}): ${EVENTS} events x3 posts, ${RECIPIENTS} recipients, ${kills} SIGKILLs, ${digests.length} digests over ${windows} windows, ${sink.requests.length} POSTs, items ${[...seen.values()].reduce((a, b) => a + b, 0)}, ${digests.filter((d) => d.accepted > 1).length} POSTed again under their key after an in-doubt attempt\n`);
    expect(kills, 'processes were killed during the run').toBeGreaterThan(0);
    // Each digest sent once: one effect at the provider; a second acceptance under its key only as
    // oneEffectProblems allows it (a request the provider read after the next attempt's lookup).
    const problems: string[] = [];
    for (const d of digests) {
      const key = d.operationKey;
      problems.push(...oneEffectProblems({
        key,
        record: await rt.operations.get(key),
        history: await rt.operations.history(key),
        posts: sink.requests.filter((r) => r.idempotencyKey === key),
        accepted: sink.accepted.get(key),
        lookups: sink.lookups.filter((l) => l.key === key),
      }));
    }
    expect(problems, 'digests not sent as one effect').toEqual([]);
    expect([...perKey].filter(([, n]) => n > 1), 'two digests for one (recipient, key, window)').toEqual([]);
    expect(ids.filter((id) => seen.get(id) !== 1), 'events not in exactly one digest').toEqual([]);
    expect(digests.every((d) => d.count === d.ids.length)).toBe(true);
  });
});
