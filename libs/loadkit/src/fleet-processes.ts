import { spawn, type ChildProcess } from 'node:child_process';

/**
 * `single`: ingest, decision and delivery in one `singleshot start` process.
 * `split`: one process per app, as in production.
 */
export type FleetLayout = 'single' | 'split';

/** One process of a fleet: its role (`singleshot`, or the app it runs) and the child. */
export interface FleetProcess {
  role: string;
  child: ChildProcess;
}

/** How to start a fleet of `singleshot start` processes. */
export interface FleetSpawnOptions {
  /** The built CLI (`dist/apps/cli/main.js`). */
  cliMain: string;
  configFile: string;
  layout: FleetLayout;
  /** `--only` of the single process; every app `start` runs by default when absent. */
  apps?: string;
  /** `--processes`; `start`'s default when absent. */
  processes?: number;
  /** Added to this process's environment. */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Node.js options before the CLI (`--cpu-prof`, …). */
  nodeArgs?: readonly string[];
  /** `pipe` to read the fleet's log lines (`startedIngestPort`); ignored by default. */
  stdout?: 'ignore' | 'pipe';
}

/** Spawns the fleet (stdout ignored unless piped, stderr passed through); `track` sees each child as it starts. */
export function spawnFleet(o: FleetSpawnOptions, track: (child: ChildProcess) => void = () => undefined): FleetProcess[] {
  const groups = o.layout === 'split' ? ['ingest', 'decision', 'delivery'] : [o.apps];
  return groups.map((only) => {
    const args = [o.cliMain, 'start', '--config', o.configFile, ...(only ? ['--only', only] : []), ...(o.processes ? ['--processes', String(o.processes)] : [])];
    const child = spawn(process.execPath, [...(o.nodeArgs ?? []), ...args], {
      stdio: ['ignore', o.stdout ?? 'ignore', 'inherit'],
      env: { ...process.env, ...o.env },
      ...(o.cwd ? { cwd: o.cwd } : {}),
    });
    track(child);
    return { role: only && o.layout === 'split' ? only : 'singleshot', child };
  });
}

/** Resolves once the child has exited (at once if it already has). */
export const exited = (p: ChildProcess): Promise<void> => new Promise<void>((r) => (p.exitCode !== null || p.signalCode !== null ? r() : p.once('exit', () => r())));

/** SIGTERM each process (each finishes or releases what it holds) and wait for all to exit. */
export async function terminate(children: readonly ChildProcess[]): Promise<void> {
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(children.map(exited));
}

/**
 * Polls `<url>/healthz` every 100 ms, up to `tries` times: `healthy` once it
 * answers 2xx, `exited` as soon as one of `children` has exited, else `timeout`.
 * The caller says what failed in its own words.
 */
export async function waitHealthy(url: string, children: readonly ChildProcess[], tries = 300): Promise<'healthy' | 'exited' | 'timeout'> {
  for (let i = 0; i < tries; i++) {
    if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) return 'healthy';
    if (children.some((c) => c.exitCode !== null)) return 'exited';
    await new Promise((r) => setTimeout(r, 100));
  }
  return 'timeout';
}

/**
 * The arguments of a load run's throwaway `redis-server`: loopback, AOF on with
 * the given fsync, no RDB snapshots, noeviction. `aofRewrite: false` turns off
 * the automatic AOF rewrite (the AOF is still written and fsynced).
 */
export function redisServerArgs(o: { port: number; dir: string; appendfsync: string; aofRewrite?: boolean }): string[] {
  return ['--port', String(o.port), '--bind', '127.0.0.1', '--dir', o.dir, '--appendonly', 'yes', '--appendfsync', o.appendfsync,
    ...(o.aofRewrite === false ? ['--auto-aof-rewrite-percentage', '0'] : []),
    '--save', '', '--maxmemory-policy', 'noeviction', '--daemonize', 'no'];
}
