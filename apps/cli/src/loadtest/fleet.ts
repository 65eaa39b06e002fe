import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort, redisAnswers } from '../embedded-redis';
import type { Teardown } from './teardown';

/**
 * `loadtest --embedded`: a throwaway Redis (AOF on) and a `singleshot start`
 * child process routing `shop/order.created` events to the loadtest's sink, so
 * the figure includes real process and network boundaries.
 */
export interface EmbeddedFleet {
  ingestUrl: string;
  /** Peak resident memory (VmHWM) of the fleet's Node processes and of Redis, in MiB (Linux). */
  peakRssMb(): { fleet: number; redis: number };
  /** CPU seconds (user + system) used so far by the fleet's Node processes and by Redis (Linux). */
  cpuSeconds(): { fleet: number; redis: number };
  /** Pids of the fleet's processes and of Redis (all stopped by `stop`). */
  pids(): number[];
  stop(): Promise<void>;
}

/** utime + stime of a process, in seconds (USER_HZ is 100 on Linux). */
function cpuSecondsOf(pid: number | undefined): number {
  if (!pid) return Number.NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

function vmHwmMb(pid: number | undefined): number {
  if (!pid) return Number.NaN;
  try {
    const kb = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
    return Math.round(kb / 1024);
  } catch {
    return Number.NaN;
  }
}

/** SIGTERM the fleet (it finishes or releases what it holds), then Redis; the dir last. */
export async function stopFleet(fleet: readonly ChildProcess[], redis: ChildProcess | undefined, teardown: Teardown): Promise<void> {
  const exited = (p: ChildProcess) => new Promise<void>((r) => (p.exitCode !== null || p.signalCode !== null ? r() : p.once('exit', () => r())));
  for (const p of fleet) p.kill('SIGTERM');
  await Promise.all(fleet.map(exited));
  if (redis) {
    redis.kill('SIGTERM');
    await exited(redis);
  }
  teardown.removeDirs();
}

/**
 * `single`: ingest, decision and delivery in one `singleshot start` process
 * (the embedded default). `split`: one process per app, as in production.
 */
export type FleetLayout = 'single' | 'split';

/** Ingest's per-producer token bucket for the run (`ingest.rateLimit`). */
export interface ProducerLimit {
  perSecond: number;
  burst: number;
}

/**
 * Starts the fleet; everything it starts is tracked by `teardown` first, so a
 * failure halfway (Redis up, fleet not) still stops what is running.
 */
export async function startEmbeddedFleet(opts: {
  sinkPort: number;
  appendfsync: string;
  concurrency: number;
  layout?: FleetLayout;
  producerLimit: ProducerLimit;
  teardown: Teardown;
}): Promise<EmbeddedFleet> {
  const { teardown } = opts;
  const dir = teardown.dir(mkdtempSync(join(tmpdir(), 'singleshot-loadtest-')));
  const redisPort = await freePort();
  const ingestPort = await freePort();
  const redis: ChildProcess = teardown.child(spawn(
    'redis-server',
    ['--port', String(redisPort), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', opts.appendfsync,
      '--save', '', '--maxmemory-policy', 'noeviction', '--daemonize', 'no'],
    { stdio: 'ignore' },
  ));
  const redisUrl = `redis://127.0.0.1:${redisPort}`;
  for (let i = 0; !(await redisAnswers(redisUrl, 300)); i++) {
    if (i > 100 || redis.exitCode !== null) throw Object.assign(new Error('loadtest: redis-server did not start (is it on PATH?)'), { code: 'LOADTEST_REDIS_START' });
    await new Promise((r) => setTimeout(r, 100));
  }
  const configFile = join(dir, 'singleshot.config.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      redis: { url: redisUrl },
      log: { level: 'warn' },
      // The producer limit sized for the test (above the offered load unless the
      // test is about the limit), and room for every connection the load uses.
      ingest: { port: ingestPort, host: '127.0.0.1', rateLimit: opts.producerLimit, maxRequestsInFlight: Math.max(1_000, opts.concurrency * 4) },
      decision: { concurrency: opts.concurrency, metricsPort: 0 },
      delivery: { concurrency: opts.concurrency, metricsPort: 0 },
      routes: [
        {
          name: 'loadtest',
          match: { source: 'loadtest' },
          action: 'notify',
          channel: 'webhook',
          recipients: 'event',
          template: { subject: 'Order {{data.orderId}}', text: 'Order {{data.orderId}} was created' },
        },
      ],
      providers: {
        webhook: [{ name: 'sink', type: 'http', url: `http://127.0.0.1:${opts.sinkPort}/send`, lookupUrl: `http://127.0.0.1:${opts.sinkPort}/messages`, timeoutMs: 5000 }],
      },
    }),
  );
  const main = resolve(__dirname, '../cli/main.js');
  const groups = opts.layout === 'split' ? ['ingest', 'decision', 'delivery'] : ['ingest,decision,delivery'];
  const fleet: ChildProcess[] = groups.map((only) =>
    teardown.child(
      spawn(process.execPath, [main, 'start', '--only', only, '--processes', '1', '--config', configFile], {
        stdio: ['ignore', 'ignore', 'inherit'],
        env: { ...process.env, REDIS_URL: redisUrl, METRICS_PORT: '0', LOG_FORMAT: 'json' },
      }),
    ),
  );
  const ingestUrl = `http://127.0.0.1:${ingestPort}`;
  for (let i = 0; ; i++) {
    const ok = await fetch(`${ingestUrl}/healthz`).then((r) => r.ok, () => false);
    if (ok) break;
    if (i > 300 || fleet.some((p) => p.exitCode !== null)) throw Object.assign(new Error('loadtest: the embedded fleet did not start'), { code: 'LOADTEST_FLEET_START' });
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    ingestUrl,
    cpuSeconds: () => ({ fleet: fleet.reduce((sum, p) => sum + cpuSecondsOf(p.pid), 0), redis: cpuSecondsOf(redis.pid) }),
    peakRssMb: () => ({ fleet: fleet.reduce((sum, p) => sum + vmHwmMb(p.pid), 0), redis: vmHwmMb(redis.pid) }),
    pids: () => [...fleet, redis].flatMap((p) => (p.pid === undefined ? [] : [p.pid])),
    stop: () => stopFleet(fleet, redis, teardown),
  };
}
