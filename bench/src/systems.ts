import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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

const exited = (p: ChildProcess) => new Promise<void>((r) => (p.exitCode !== null || p.signalCode !== null ? r() : p.once('exit', () => r())));

async function waitHealthy(url: string, children: ChildProcess[]): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) return;
    if (children.some((c) => c.exitCode !== null)) throw new Error(`bench: a process of the system under test exited (${url})`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`bench: ${url} did not become healthy within 30 s`);
}

/** dist/ holds the bundles (npm run bench builds first); from source (vitest) it is the repo's dist/. */
const DIST = existsSync(join(__dirname, '..', 'apps')) ? resolve(__dirname, '..') : resolve(__dirname, '../../dist');

function singleshotConfig(dir: string, redisUrl: string, ports: { ingest: number; decision: number; delivery: number }, sinkPort: number, concurrency: number, sources: readonly Record<string, unknown>[] = [], route: Record<string, unknown> = {}): string {
  const file = join(dir, 'singleshot.config.json');
  writeFileSync(
    file,
    JSON.stringify({
      redis: { url: redisUrl },
      log: { level: 'warn' },
      // The driver is one producer posting as fast as it can; the default limit
      // (1,000 requests/s per producer) would answer 429 and the retries would be
      // counted against singleshot. The peers have no limit at all.
      ingest: { port: ports.ingest, host: '127.0.0.1', rateLimit: { perSecond: 1_000_000, burst: 1_000_000 } },
      decision: { concurrency, metricsPort: ports.decision },
      delivery: { concurrency, metricsPort: ports.delivery },
      routes: [
        {
          name: 'bench',
          match: { source: 'bench' },
          action: 'notify',
          channel: 'webhook',
          recipients: 'event',
          template: { subject: 'Order {{data.orderId}}', text: 'Order {{data.orderId}} was created' },
          // The bench's `--digests` rows: the same route with a `digest` (and a template over its items).
          ...route,
        },
      ],
      providers: {
        webhook: [{ name: 'sink', type: 'http', url: `http://127.0.0.1:${sinkPort}/send`, lookupUrl: `http://127.0.0.1:${sinkPort}/messages`, timeoutMs: 5000 }],
      },
      // The bench's `--sources` rows: `singleshot start` runs the relay in process when this has an entry.
      ...(sources.length > 0 ? { sources } : {}),
    }),
  );
  return file;
}

/**
 * Starts one system with its own fresh store, its ingest on a free port,
 * posting to the sink. singleshot only: `sources` for its relay, `route`
 * fields laid over its one route (`digest`, `template`).
 */
export async function startSystem(id: SystemId, opts: { sinkPort: number; concurrency: number; appendfsync: 'everysec' | 'always'; aofRewrite?: boolean; processes?: number; sources?: readonly Record<string, unknown>[]; route?: Record<string, unknown> }): Promise<RunningSystem> {
  const def = SYSTEMS.find((s) => s.id === id);
  if (!def) throw new Error(`bench: unknown system ${id}`);
  const store = def.store === 'postgres' ? { ...(await startPostgres()), kind: 'postgres' as const } : { ...(await startRedis(opts.appendfsync, opts.aofRewrite)), kind: 'redis' as const };
  const port = await freePort();
  const ingestUrl = `http://127.0.0.1:${port}`;
  const children: { role: string; child: ChildProcess }[] = [];
  const metricsUrls: string[] = [];
  let dir: string | undefined;
  try {
    if (id === 'singleshot-start' || id === 'singleshot-split') {
      dir = mkdtempSync(join(tmpdir(), 'singleshot-bench-fleet-'));
      const ports = { ingest: port, decision: await freePort(), delivery: await freePort() };
      const config = singleshotConfig(dir, store.url, ports, opts.sinkPort, opts.concurrency, opts.sources, opts.route);
      // Every app's /metrics: in one process the ingest port serves all of them, else each its own.
      metricsUrls.push(`${ingestUrl}/metrics`, `http://127.0.0.1:${ports.decision}/metrics`, `http://127.0.0.1:${ports.delivery}/metrics`);
      const groups = id === 'singleshot-split' ? ['ingest', 'decision', 'delivery'] : [undefined];
      for (const only of groups) {
        const args = [join(DIST, 'apps/cli/main.js'), 'start', '--config', config, ...(only ? ['--only', only] : []), ...(opts.processes ? ['--processes', String(opts.processes)] : [])];
        const child = spawn(process.execPath, [...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []), ...args], {
          stdio: ['ignore', 'ignore', 'inherit'],
          env: { ...process.env, REDIS_URL: store.url },
          cwd: dir,
        });
        children.push({ role: only ?? 'singleshot', child });
      }
    } else {
      const peer: PeerOptions = { system: id, port, sinkUrl: `http://127.0.0.1:${opts.sinkPort}`, concurrency: opts.concurrency, ...(store.kind === 'redis' ? { redisUrl: store.url } : { postgresUrl: store.url }) };
      const child = spawn(process.execPath, [...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []), join(DIST, 'bench/peer.js'), JSON.stringify(peer)], { stdio: ['ignore', 'ignore', 'inherit'] });
      children.push({ role: id, child });
    }
    await waitHealthy(ingestUrl, children.map((c) => c.child));
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
      for (const { child } of children) child.kill('SIGTERM');
      await Promise.all(children.map(({ child }) => exited(child)));
      await store.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
