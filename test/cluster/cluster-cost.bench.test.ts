import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventMessageKey, operationKey, parseAction } from '@singleshot/core';
import {
  spawnApps,
  startHttpSink,
  startTestRedisCluster,
  testConfig,
  writeConfigFile,
  type AppProcess,
  type HttpSink,
  type TestRedisCluster,
} from '@singleshot/test-harness';

// What replica waits cost on the local 3 + 3 cluster, side by side in one run.
// One fleet per run (one ingest, one decision, one delivery process), N events
// × 2 recipients each posted once with 64 POSTs in flight; notifications/s from
// the first POST until the sink has every operation, and WAIT calls per
// notification (cmdstat_wait over every node since CONFIG RESETSTAT), and CPU
// ms per notification of the three app processes and of the six Redis nodes
// (CPU is what the 2 shared cores of a test machine make least noisy).
// Configurations, interleaved in rounds (A B C A B C …) so drift on a shared
// machine falls on all of them alike:
//   A  waitReplicas 0 (no replica wait at all), this build;
//   B  waitReplicas 1, this build (acceptance, decision, claim and commit waits);
//   C  waitReplicas 1, an older build (SINGLESHOT_BENCH_BASELINE: a built git
//      worktree, e.g. `git worktree add /tmp/ss-old <commit> && ln -s
//      $PWD/node_modules /tmp/ss-old/node_modules && (cd /tmp/ss-old && node
//      tools/build.mjs)`); left out when unset.
// SINGLESHOT_BENCH_EVENTS (default 2000), SINGLESHOT_BENCH_ROUNDS (default 3),
// SINGLESHOT_BENCH_WARMUP (events of an unrecorded first run, default 500).
// Asserts counts only: every operation reaches the provider exactly once.
const EVENTS = Number(process.env.SINGLESHOT_BENCH_EVENTS ?? 2000);
/** Events of one unrecorded run first: the first fleet on a fresh cluster was the slowest run in trials, whatever its configuration. */
const WARMUP_EVENTS = Number(process.env.SINGLESHOT_BENCH_WARMUP ?? 500);
const ROUNDS = Number(process.env.SINGLESHOT_BENCH_ROUNDS ?? 3);
const RECIPIENTS = 2;
const IN_FLIGHT = 64;
const BASELINE = process.env.SINGLESHOT_BENCH_BASELINE;

interface Setup {
  name: string;
  waitReplicas: number;
  build?: { cliMain: string; cwd: string };
}
const setups: Setup[] = [
  { name: 'A waitReplicas 0', waitReplicas: 0 },
  { name: 'B waitReplicas 1', waitReplicas: 1 },
  ...(BASELINE ? [{ name: `C waitReplicas 1, ${BASELINE}`, waitReplicas: 1, build: { cliMain: join(BASELINE, 'dist/apps/cli/main.js'), cwd: BASELINE } }] : []),
];

interface RunResult {
  perSecond: number;
  waitsPerNotification: number;
  p95Ms: number;
  medianMs: number;
  appCpuMs: number;
  redisCpuMs: number;
  load1: number;
  retries: number;
  duplicates: number;
  missing: number;
  unexpected: number;
}

let cluster: TestRedisCluster;
let sink: HttpSink;

beforeAll(async () => {
  if (BASELINE && !existsSync(join(BASELINE, 'dist/apps/cli/main.js'))) throw new Error(`SINGLESHOT_BENCH_BASELINE has no dist/apps/cli/main.js: ${BASELINE}`);
  cluster = await startTestRedisCluster();
  sink = await startHttpSink();
}, 120_000);

afterAll(async () => {
  await sink?.close();
  await cluster?.destroy();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] as number;
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] as number;

/** CPU ms (user + system) a process used so far, from /proc/<pid>/stat (clock ticks of 10 ms). */
function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after "(comm) ".
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** CPU ms (user + system) every Redis node used so far (INFO cpu). */
async function redisCpuMs(): Promise<number> {
  let ms = 0;
  for (const node of cluster.nodes) {
    const info = await cluster.cli(node, 'INFO', 'cpu');
    for (const m of info.matchAll(/^used_cpu_(?:sys|user):([0-9.]+)/gm)) ms += Number(m[1]) * 1000;
  }
  return ms;
}

/** Sum of one command's calls over every node since CONFIG RESETSTAT. */
async function callsOf(command: string): Promise<number> {
  let calls = 0;
  for (const node of cluster.nodes) {
    const info = await cluster.cli(node, 'INFO', 'commandstats');
    const m = info.match(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm'));
    calls += Number(m?.[1] ?? 0);
  }
  return calls;
}

async function post(base: string, event: unknown, counters: { retries: number }): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      const res = await fetch(`${base}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(event) });
      await res.arrayBuffer();
      if (res.status === 202) return;
    } catch {
      // connection reset: retry
    }
    counters.retries++;
    await sleep(50);
  }
  throw new Error('an event was never accepted');
}

async function runOnce(setup: Setup, run: number, eventCount = EVENTS): Promise<RunResult> {
  const masters = await cluster.masters();
  for (const m of masters) await cluster.cli(m, 'FLUSHALL');
  sink.reset();
  const config = testConfig({
    redisUrl: `redis://${cluster.seeds[0]}`,
    redisCluster: cluster.seeds,
    // The production defaults for concurrency (testConfig lowers them).
    decision: { metricsPort: 0, concurrency: 16 },
    delivery: { leaseMs: 5000, attempts: 5, backoffMs: [100, 200, 400], concurrency: 32, metricsPort: 0 },
    routes: [{ name: 'orders', match: { source: 'shop', type: 'order.created' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { subject: 'Order {{data.orderId}}', text: 'Order {{data.orderId}}' } }],
    providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 5000 }] },
  });
  // testConfig turns waitReplicas on for a cluster; set this configuration's value.
  const redis = config.redis as { keyPrefix: string; cluster: { waitReplicas: number } };
  redis.keyPrefix = `ss${run}`;
  redis.cluster.waitReplicas = setup.waitReplicas;
  const { file, cleanup } = writeConfigFile(config);

  const procs: AppProcess[] = ['ingest', 'decision', 'delivery'].map((only) => spawnApps(only, file, {}, setup.build));
  try {
    const ports = await Promise.all(procs.map((p) => p.metricsPort()));
    const base = `http://127.0.0.1:${ports[0]}`;
    const keyEvent = new Map<string, number>();
    const events = Array.from({ length: eventCount }, (_, i) => {
      const id = `r${run}-evt-${i}`;
      const recipients = Array.from({ length: RECIPIENTS }, (_, r) => `user${i}-${r}@example.com`);
      const messageKey = eventMessageKey('shop', id);
      for (const recipient of recipients) keyEvent.set(operationKey({ messageKey, action: parseAction('notify'), recipient, channel: 'webhook' }), i);
      return { id, source: 'shop', type: 'order.created', recipients, data: { orderId: `o-${i}` } };
    });
    for (const node of cluster.nodes) await cluster.cli(node, 'CONFIG', 'RESETSTAT');
    const appCpuBefore = procs.reduce((sum, p) => sum + cpuMsOf(p.pid), 0);
    const redisCpuBefore = await redisCpuMs();

    const postedAt: number[] = [];
    const counters = { retries: 0 };
    const start = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < events.length) {
          const i = next++;
          postedAt[i] = Date.now();
          await post(base, events[i], counters);
        }
      }),
    );
    await sink.waitFor((s) => s.accepted.size >= keyEvent.size, { timeoutMs: 300_000, what: 'every operation at the sink' });
    const firstArrival = new Map<string, number>();
    for (const r of sink.requests) if (r.idempotencyKey && !firstArrival.has(r.idempotencyKey)) firstArrival.set(r.idempotencyKey, r.receivedAt);
    const last = Math.max(...firstArrival.values());
    const waits = await callsOf('wait');
    const appCpu = procs.reduce((sum, p) => sum + cpuMsOf(p.pid), 0) - appCpuBefore;
    const redisCpu = (await redisCpuMs()) - redisCpuBefore;
    const perNotification = (ms: number) => Math.round((ms / keyEvent.size) * 100) / 100;
    const latencies = [...firstArrival].filter(([k]) => keyEvent.has(k)).map(([k, at]) => at - (postedAt[keyEvent.get(k) as number] as number));
    return {
      perSecond: Math.round((keyEvent.size / (last - start)) * 1000),
      waitsPerNotification: Math.round((waits / keyEvent.size) * 1000) / 1000,
      p95Ms: quantile(latencies, 0.95),
      medianMs: median(latencies),
      appCpuMs: perNotification(appCpu),
      redisCpuMs: perNotification(redisCpu),
      load1: Math.round((loadavg()[0] as number) * 10) / 10,
      retries: counters.retries,
      duplicates: [...sink.accepted.values()].filter((a) => a.count !== 1).length,
      missing: [...keyEvent.keys()].filter((k) => !sink.accepted.has(k)).length,
      unexpected: [...sink.accepted.keys()].filter((k) => !keyEvent.has(k)).length,
    };
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    cleanup();
  }
}

describe('replica waits on the cluster: what they cost', () => {
  it(`${EVENTS} events × ${RECIPIENTS} recipients, ${ROUNDS} rounds of ${setups.map((s) => s.name.slice(0, 1)).join(' ')}`, async () => {
    const results = new Map<string, RunResult[]>(setups.map((s) => [s.name, []]));
    let run = 0;
    if (WARMUP_EVENTS > 0) {
      const warmup = await runOnce(setups[1] ?? setups[0]!, run++, WARMUP_EVENTS);
      console.warn(JSON.stringify({ figures: 'cluster cost warm-up run (not counted)', events: WARMUP_EVENTS, ...warmup }));
      expect({ missing: warmup.missing, duplicates: warmup.duplicates, unexpected: warmup.unexpected }).toEqual({ missing: 0, duplicates: 0, unexpected: 0 });
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const setup of setups) {
        const result = await runOnce(setup, run++);
        results.get(setup.name)!.push(result);
        console.warn(JSON.stringify({ figures: 'cluster cost run', round, setup: setup.name, ...result }));
      }
    }
    const table = setups.map((s) => {
      const rs = results.get(s.name)!;
      return {
        config: s.name,
        'notifications/s per round': rs.map((r) => r.perSecond).join(' '),
        'median /s': median(rs.map((r) => r.perSecond)),
        // Paired within each round, so drift between rounds cancels out.
        'vs A (median of rounds)': median(rs.map((r, i) => Math.round((r.perSecond / (results.get(setups[0]!.name)![i]!.perSecond)) * 100) / 100)),
        'WAIT per notification': median(rs.map((r) => r.waitsPerNotification)),
        'p95 ms (median of rounds)': median(rs.map((r) => r.p95Ms)),
        'p50 ms (median of rounds)': median(rs.map((r) => r.medianMs)),
        'app CPU ms/notification': median(rs.map((r) => r.appCpuMs)),
        'Redis CPU ms/notification': median(rs.map((r) => r.redisCpuMs)),
      };
    });
    console.warn(`cluster cost: ${EVENTS} events × ${RECIPIENTS} recipients, ${IN_FLIGHT} POSTs in flight, 1 ingest + 1 decision + 1 delivery process`);
    const columns = Object.keys(table[0] ?? {}) as (keyof (typeof table)[number])[];
    const widths = columns.map((c) => Math.max(c.length, ...table.map((row) => String(row[c]).length)));
    const line = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i] as number)).join(' | ')} |`;
    console.warn([line(columns), line(widths.map((w) => '-'.repeat(w))), ...table.map((row) => line(columns.map((c) => String(row[c]))))].join('\n'));
    for (const [, rs] of results) {
      for (const r of rs) expect({ missing: r.missing, duplicates: r.duplicates, unexpected: r.unexpected }).toEqual({ missing: 0, duplicates: 0, unexpected: 0 });
    }
  }, 1_800_000);
});
