import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort, redisAnswers } from '../embedded-redis';

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

/**
 * `single`: ingest, decision and delivery in one `singleshot start` process
 * (the embedded default). `split`: one process per app, as in production.
 */
export type FleetLayout = 'single' | 'split';

export async function startEmbeddedFleet(opts: { sinkPort: number; appendfsync: string; concurrency: number; layout?: FleetLayout }): Promise<EmbeddedFleet> {
  const dir = mkdtempSync(join(tmpdir(), 'singleshot-loadtest-'));
  const redisPort = await freePort();
  const ingestPort = await freePort();
  const redis: ChildProcess = spawn(
    'redis-server',
    ['--port', String(redisPort), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', opts.appendfsync,
      '--save', '', '--maxmemory-policy', 'noeviction', '--daemonize', 'no'],
    { stdio: 'ignore' },
  );
  const redisUrl = `redis://127.0.0.1:${redisPort}`;
  for (let i = 0; !(await redisAnswers(redisUrl, 300)); i++) {
    if (i > 100 || redis.exitCode !== null) throw new Error('loadtest: redis-server did not start (is it on PATH?)');
    await new Promise((r) => setTimeout(r, 100));
  }
  const configFile = join(dir, 'singleshot.config.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      redis: { url: redisUrl },
      log: { level: 'warn' },
      ingest: { port: ingestPort, host: '127.0.0.1' },
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
    spawn(process.execPath, [main, 'start', '--only', only, '--processes', '1', '--config', configFile], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, REDIS_URL: redisUrl, METRICS_PORT: '0' },
    }),
  );
  const ingestUrl = `http://127.0.0.1:${ingestPort}`;
  for (let i = 0; ; i++) {
    const ok = await fetch(`${ingestUrl}/healthz`).then((r) => r.ok, () => false);
    if (ok) break;
    if (i > 300 || fleet.some((p) => p.exitCode !== null)) throw new Error('loadtest: the embedded fleet did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  const exited = (p: ChildProcess) => new Promise<void>((r) => (p.exitCode !== null ? r() : p.once('exit', () => r())));
  return {
    ingestUrl,
    cpuSeconds: () => ({ fleet: fleet.reduce((sum, p) => sum + cpuSecondsOf(p.pid), 0), redis: cpuSecondsOf(redis.pid) }),
    peakRssMb: () => ({ fleet: fleet.reduce((sum, p) => sum + vmHwmMb(p.pid), 0), redis: vmHwmMb(redis.pid) }),
    stop: async () => {
      for (const p of fleet) p.kill('SIGTERM');
      await Promise.all(fleet.map(exited));
      redis.kill('SIGTERM');
      await exited(redis);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
