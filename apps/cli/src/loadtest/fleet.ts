import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { redisAnswers } from '../embedded-redis';
import type { Teardown } from './teardown';
import { cpuSecondsOf, freePort, peakRssMb, redisServerArgs, spawnFleet, startedIngestPort, terminate, waitHealthy, writeFleetConfig, type FleetLayout } from '@singleshot/loadkit';

export type { FleetLayout };

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

/** A figure that cannot be read (not Linux) shows as NaN in the report, never as a zero. */
const UNREADABLE = { unreadable: Number.NaN };

/** Peak resident memory of a process, whole MiB. */
const vmHwmMb = (pid: number | undefined): number => Math.round(peakRssMb(pid, UNREADABLE));

/** SIGTERM the fleet (it finishes or releases what it holds), then Redis; the dir last. */
export async function stopFleet(fleet: readonly ChildProcess[], redis: ChildProcess | undefined, teardown: Teardown): Promise<void> {
  await terminate(fleet);
  if (redis) await terminate([redis]);
  teardown.removeDirs();
}

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
  const redis: ChildProcess = teardown.child(spawn('redis-server', redisServerArgs({ port: redisPort, dir, appendfsync: opts.appendfsync }), { stdio: 'ignore' }));
  const redisUrl = `redis://127.0.0.1:${redisPort}`;
  for (let i = 0; !(await redisAnswers(redisUrl, 300)); i++) {
    if (i > 100 || redis.exitCode !== null) throw Object.assign(new Error('loadtest: redis-server did not start (is it on PATH?)'), { code: 'LOADTEST_REDIS_START' });
    await new Promise((r) => setTimeout(r, 100));
  }
  const configFile = writeFleetConfig(dir, {
    redisUrl,
    source: 'loadtest',
    // Bound by the kernel as ingest listens, and read from its start line.
    ingestPort: 0,
    sinkPort: opts.sinkPort,
    concurrency: opts.concurrency,
    // The producer limit sized for the test (above the offered load unless the
    // test is about the limit), and room for every connection the load uses.
    rateLimit: opts.producerLimit,
    maxRequestsInFlight: Math.max(1_000, opts.concurrency * 4),
  });
  const processes = spawnFleet(
    {
      cliMain: resolve(__dirname, '../cli/main.js'),
      configFile,
      layout: opts.layout ?? 'single',
      apps: 'ingest,decision,delivery',
      processes: 1,
      // `info`: the start line that says ingest's port.
      env: { REDIS_URL: redisUrl, METRICS_PORT: '0', LOG_FORMAT: 'json', LOG_LEVEL: 'info' },
      stdout: 'pipe',
    },
    (child) => teardown.child(child),
  );
  const fleet = processes.map(({ child }) => child);
  const fleetDidNotStart = () => Object.assign(new Error('loadtest: the embedded fleet did not start'), { code: 'LOADTEST_FLEET_START' });
  // Every process's stdout is read or drained, so none blocks on a full pipe.
  for (const { role, child } of processes) if (role !== 'ingest' && role !== 'singleshot') child.stdout?.resume();
  const ingest = processes.find(({ role }) => role === 'ingest' || role === 'singleshot');
  const ingestPort = ingest ? await startedIngestPort(ingest.child) : 'exited';
  if (typeof ingestPort !== 'number') throw fleetDidNotStart();
  const ingestUrl = `http://127.0.0.1:${ingestPort}`;
  if ((await waitHealthy(ingestUrl, fleet)) !== 'healthy') throw fleetDidNotStart();
  return {
    ingestUrl,
    cpuSeconds: () => ({ fleet: fleet.reduce((sum, p) => sum + cpuSecondsOf(p.pid, UNREADABLE), 0), redis: cpuSecondsOf(redis.pid, UNREADABLE) }),
    peakRssMb: () => ({ fleet: fleet.reduce((sum, p) => sum + vmHwmMb(p.pid), 0), redis: vmHwmMb(redis.pid) }),
    pids: () => [...fleet, redis].flatMap((p) => (p.pid === undefined ? [] : [p.pid])),
    stop: () => stopFleet(fleet, redis, teardown),
  };
}
