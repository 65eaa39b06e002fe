import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { spawnFleet, terminate, waitHealthy, writeFleetConfig, type FleetProcess } from '@singleshot/loadkit';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort, startPostgres, startRedis, type BenchServer } from './servers';
import type { PeerOptions } from './peers/options';

/** The systems the bench compares; ids are stable (they key the JSON results). */
export const SYSTEMS = [
  { id: 'bullmq-noop', name: '(a) bare BullMQ, no-op jobs (no dedup)', exact: false, store: 'redis' },
  { id: 'bullmq-naive', name: '(b) naive three-stage BullMQ pipeline', exact: false, store: 'redis' },
  { id: 'postgres-outbox', name: '(c) PostgreSQL: processed_messages + outbox, SKIP LOCKED', exact: true, store: 'postgres' },
  { id: 'singleshot-start', name: '(d) singleshot, `singleshot start`', exact: true, store: 'redis' },
  { id: 'singleshot-split', name: '(d) singleshot, one process per app', exact: true, store: 'redis' },
] as const;

export type SystemId = (typeof SYSTEMS)[number]['id'];

export interface RunningSystem {
  ingestUrl: string;
  /** The system's Node processes (role → pid). */
  fleet: { role: string; pid: number }[];
  /** URLs serving Prometheus metrics (singleshot only). */
  metricsUrls: string[];
  store: BenchServer & { kind: 'redis' | 'postgres' };
  stop(): Promise<void>;
}

/** Node.js options for every process of the system under test (a profiler's, say). */
const NODE_ARGS = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];

/** dist/ holds the bundles (npm run bench builds first); from source (vitest) it is the repo's dist/. */
const DIST = existsSync(join(__dirname, '..', 'apps')) ? resolve(__dirname, '..') : resolve(__dirname, '../../dist');

/**
 * Starts one system with its own fresh store, its ingest on a free port,
 * posting to the sink. singleshot only: `sources` for its relay, `route`
 * fields laid over its one route (`digest`, `template`).
 */
export async function startSystem(id: SystemId, opts: { sinkPort: number; concurrency: number; appendfsync: 'everysec' | 'always'; aofRewrite?: boolean; processes?: number; sources?: readonly Record<string, unknown>[]; route?: Record<string, unknown>; tenantKeys?: ReadonlyArray<{ tenant: string; key: string }>; fairShare?: 'on' | 'off'; nodeArgs?: readonly string[] }): Promise<RunningSystem> {
  const nodeArgs = [...NODE_ARGS, ...(opts.nodeArgs ?? [])];
  const def = SYSTEMS.find((s) => s.id === id);
  if (!def) throw new Error(`bench: unknown system ${id}`);
  const store = def.store === 'postgres' ? { ...(await startPostgres()), kind: 'postgres' as const } : { ...(await startRedis(opts.appendfsync, opts.aofRewrite)), kind: 'redis' as const };
  const port = await freePort();
  const ingestUrl = `http://127.0.0.1:${port}`;
  const children: FleetProcess[] = [];
  const metricsUrls: string[] = [];
  let dir: string | undefined;
  try {
    if (id === 'singleshot-start' || id === 'singleshot-split') {
      dir = mkdtempSync(join(tmpdir(), 'singleshot-bench-fleet-'));
      const metricsPorts = { decision: await freePort(), delivery: await freePort() };
      const configFile = writeFleetConfig(dir, {
        redisUrl: store.url,
        source: 'bench',
        ingestPort: port,
        sinkPort: opts.sinkPort,
        concurrency: opts.concurrency,
        // The driver is one producer posting as fast as it can; the default limit
        // (1,000 requests/s per producer) would answer 429 and the retries would be
        // counted against singleshot. The peers have no limit at all.
        rateLimit: { perSecond: 1_000_000, burst: 1_000_000 },
        metricsPorts,
        // The bench's `--digests` rows: the same route with a `digest` (and a template over its items).
        ...(opts.route ? { route: opts.route } : {}),
        // The bench's `--sources` rows.
        ...(opts.sources ? { sources: opts.sources } : {}),
        // The bench's `--tenants` row: a producer key per tenant.
        ...(opts.tenantKeys ? { tenantKeys: opts.tenantKeys } : {}),
        ...(opts.fairShare ? { fairShare: opts.fairShare } : {}),
      });
      // Every app's /metrics: in one process the ingest port serves all of them, else each its own.
      metricsUrls.push(`${ingestUrl}/metrics`, `http://127.0.0.1:${metricsPorts.decision}/metrics`, `http://127.0.0.1:${metricsPorts.delivery}/metrics`);
      children.push(...spawnFleet({
        cliMain: join(DIST, 'apps/cli/main.js'),
        configFile,
        layout: id === 'singleshot-split' ? 'split' : 'single',
        ...(opts.processes ? { processes: opts.processes } : {}),
        env: { REDIS_URL: store.url },
        cwd: dir,
        nodeArgs,
      }));
    } else {
      const peer: PeerOptions = { system: id, port, sinkUrl: `http://127.0.0.1:${opts.sinkPort}`, concurrency: opts.concurrency, ...(store.kind === 'redis' ? { redisUrl: store.url } : { postgresUrl: store.url }) };
      const child = spawn(process.execPath, [...nodeArgs, join(DIST, 'bench/peer.js'), JSON.stringify(peer)], { stdio: ['ignore', 'ignore', 'inherit'] });
      children.push({ role: id, child });
    }
    const health = await waitHealthy(ingestUrl, children.map((c) => c.child));
    if (health === 'exited') throw new Error(`bench: a process of the system under test exited (${ingestUrl})`);
    if (health === 'timeout') throw new Error(`bench: ${ingestUrl} did not become healthy within 30 s`);
  } catch (err) {
    for (const { child } of children) child.kill('SIGKILL');
    await store.stop();
    throw err;
  }
  return {
    ingestUrl,
    fleet: children.map(({ role, child }) => ({ role, pid: child.pid ?? 0 })),
    metricsUrls,
    store,
    stop: async () => {
      await terminate(children.map(({ child }) => child));
      await store.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
