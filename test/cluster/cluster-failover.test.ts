import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventMessageKey, operationKey, parseAction } from '@singleshot/core';
import type { Runtime } from '@singleshot/runtime';
import {
  spawnApps,
  startHttpSink,
  startTestRedisCluster,
  testConfig,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type HttpSink,
  type TestRedisCluster,
} from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';
import { commandsPerMaster, shares } from './commandstats';

// Done-when of "Beyond one Redis": separate processes on the local 3 + 3
// cluster; 400 events, each posted 3 times in parallel; delivery workers
// SIGKILLed at random; one master SIGKILLed between two waves of arrivals (its
// replica is promoted). One provider effect per (event, recipient), nothing
// lost, nothing unexpected, and every master carries at least 10% of the commands.
const EVENTS = 400;
const RECIPIENTS = 2;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let cluster: TestRedisCluster;
let sink: HttpSink;
let rt: Runtime;
let cleanup: () => void;
let configFile: string;
const procs: AppProcess[] = [];

beforeAll(async () => {
  cluster = await startTestRedisCluster();
  sink = await startHttpSink();
  const config = testConfig({
    redisUrl: `redis://${cluster.seeds[0]}`,
    redisCluster: cluster.seeds,
    delivery: { leaseMs: 2000, attempts: 5, backoffMs: [100, 200, 400], concurrency: 16, metricsPort: 0, sweepIntervalMs: 2000 },
    routes: [{ name: 'orders', match: { source: 'shop', type: 'order.created' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { subject: 'Order {{data.orderId}}', text: 'Order {{data.orderId}}' } }],
    providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 2000 }] },
  });
  const written = writeConfigFile(config);
  configFile = written.file;
  cleanup = written.cleanup;
  rt = await testRuntime({ ...config, log: { level: 'silent' } });
}, 120_000);

afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop()));
  await rt?.close();
  await sink?.close();
  await cluster?.destroy();
  cleanup?.();
});

const spawn = (only: string) => {
  const p = spawnApps(only, configFile);
  procs.push(p);
  return p;
};

/** A producer: posts until it gets a 2xx (a 503 or a cut connection means "retry"). */
async function postUntilAccepted(base: string, event: unknown, counters: { retries: number }): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    try {
      const res = await fetch(`${base}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(event) });
      await res.arrayBuffer();
      if (res.status === 202) return;
    } catch {
      // connection refused or reset: retry
    }
    counters.retries++;
    await sleep(100);
  }
  throw new Error('an event was never accepted');
}

describe('a fleet on the cluster through a master failover', () => {
  it('400 events × 3 arrivals, workers SIGKILLed, one master SIGKILLed: one effect per (event, recipient)', async () => {
    for (const node of cluster.nodes) await cluster.cli(node, 'CONFIG', 'RESETSTAT');
    const ingest = spawn('ingest');
    spawn('decision');
    const workers = [spawn('delivery'), spawn('delivery')];
    const base = `http://127.0.0.1:${await ingest.metricsPort()}`;

    const expected = new Set<string>();
    const events = Array.from({ length: EVENTS }, (_, i) => {
      const recipients = Array.from({ length: RECIPIENTS }, (_, r) => `user${i}-${r}@example.com`);
      const messageKey = eventMessageKey('shop', `evt-${i}`);
      for (const recipient of recipients) expected.add(operationKey({ messageKey, action: parseAction('notify'), recipient, channel: 'webhook' }));
      return { id: `evt-${i}`, source: 'shop', type: 'order.created', recipients, data: { orderId: `o-${i}` } };
    });

    // Random SIGKILLs of delivery workers, each replaced at once.
    let chaos = true;
    let kills = 0;
    const killer = (async () => {
      let seed = 7;
      const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
      while (chaos) {
        await sleep(1500 + rand() * 2500);
        if (!chaos) break;
        const i = Math.floor(rand() * workers.length);
        workers[i]!.signal('SIGKILL');
        await workers[i]!.exited();
        kills++;
        workers[i] = spawn('delivery');
      }
    })();

    const counters = { retries: 0 };
    const wave = async (list: typeof events) => {
      for (let i = 0; i < list.length; i += 25) {
        await Promise.all(list.slice(i, i + 25).flatMap((e) => [0, 1, 2].map(() => postUntilAccepted(base, e, counters))));
      }
    };
    await wave(events.slice(0, EVENTS / 2));
    const [victim] = await cluster.masters();
    await cluster.kill9(victim!);
    const failoverStart = Date.now();
    await cluster.waitForPromotion(victim!);
    const promotionMs = Date.now() - failoverStart;
    await wave(events.slice(EVENTS / 2));

    await sink.waitFor((s) => [...expected].every((k) => s.accepted.has(k)), { timeoutMs: 240_000, what: 'every operation to reach the provider' });
    chaos = false;
    await killer;
    // Every operation ends sent in the store too (the ending survived the failover).
    await waitUntil(async () => (await rt.operations.probe([...expected])).every((p) => p.status === 'sent'), 'every operation sent', { timeoutMs: 120_000, intervalMs: 500 });

    const unexpected = [...sink.accepted.keys()].filter((k) => !expected.has(k));
    const effects = [...expected].map((k) => sink.accepted.get(k)?.count ?? 0);
    const perMaster = await commandsPerMaster(cluster);
    const masterShares = shares(perMaster);
    console.warn(
      JSON.stringify({
        figures: 'cluster failover run',
        operations: expected.size,
        posts: sink.requests.length,
        duplicatePosts: sink.requests.length - expected.size,
        lookups: sink.lookups.length,
        workerKills: kills,
        producerRetries: counters.retries,
        promotionMs,
        killedMaster: victim!.address,
        commandsPerMaster: perMaster,
        shares: masterShares,
      }),
    );
    expect(unexpected).toEqual([]);
    expect(effects.filter((n) => n !== 1)).toEqual([]);
    expect(sink.accepted.size).toBe(EVENTS * RECIPIENTS);
    expect(kills).toBeGreaterThan(0);
    expect(Object.keys(perMaster)).toHaveLength(3);
    for (const share of Object.values(masterShares)) expect(share).toBeGreaterThanOrEqual(0.1);
  }, 600_000);
});
