import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { waitUntil } from './free-port';

/** Repo root, wherever the tests run from. */
export const REPO_ROOT = resolve(__dirname, '../..');
export const CLI_MAIN = join(REPO_ROOT, 'dist/apps/cli/main.js');

/** A config for tests: fast lease and backoff, the given routes/providers. */
export function testConfig(input: Record<string, unknown> & { redisUrl: string; redisCluster?: string[] }): Record<string, unknown> {
  const { redisUrl, redisCluster, ...rest } = input;
  return {
    // On a cluster: 64 shards and partitions (16 tags fall 8/4/4 on 3 masters, 64 fall 23/20/21), WAIT for 1 replica.
    redis: { url: redisUrl, keyPrefix: 'ss', ...(redisCluster ? { shards: 64, partitions: 64, cluster: { nodes: redisCluster, waitReplicas: 1, waitTimeoutMs: 2000 } } : {}) },
    log: { level: process.env.TEST_LOG_LEVEL ?? 'warn' },
    ingest: { port: 0, host: '127.0.0.1' },
    decision: { metricsPort: 0, concurrency: 8 },
    delivery: { leaseMs: 2000, attempts: 5, backoffMs: [100, 200, 400], concurrency: 8, metricsPort: 0 },
    ...rest,
  };
}

/** One app process (`node dist/apps/cli/main.js start --only …`), killable with real signals. */
export interface AppProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** JSON log lines seen so far. */
  readonly logs: Record<string, unknown>[];
  /** What the process wrote to stderr so far (a crash's stack trace lands here). */
  stderr(): string;
  /** Port of /metrics (METRICS_PORT=0 → parsed from the log). */
  metricsPort(): Promise<number>;
  /** Value of one metric sample summed over label sets matching `labels`. */
  metric(name: string, labels?: Record<string, string>): Promise<number>;
  signal(sig: NodeJS.Signals): void;
  exited(): Promise<number | null>;
  stop(): Promise<void>;
}

export function writeConfigFile(config: Record<string, unknown>): { file: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'singleshot-config-'));
  const file = join(dir, 'singleshot.config.json');
  writeFileSync(file, JSON.stringify(config, null, 2));
  return { file, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Starts `start --only <only>` as one process. `build` runs another build of the
 * CLI (e.g. an older commit's worktree, to compare): its `main.js` and the cwd
 * to run it in; by default this repo's dist.
 */
export function spawnApps(only: string, configFile: string, env: Record<string, string> = {}, build: { cliMain: string; cwd: string } = { cliMain: CLI_MAIN, cwd: REPO_ROOT }): AppProcess {
  // One process for the listed apps (their metrics on one port, one pid to kill);
  // the multi-process default of `start` has its own test.
  const child = spawn(process.execPath, [build.cliMain, 'start', '--only', only, '--processes', '1', '--config', configFile], {
    cwd: build.cwd,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  let buffer = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        logs.push({ raw: line });
      }
    }
  });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  // `close`, not `exit`: it comes once stdout and stderr are read to their end as well, so a test
  // reading `logs` after the exit sees the process's last lines (written just before it left).
  const exit = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  const proc: AppProcess = {
    child,
    pid: child.pid as number,
    logs,
    stderr: () => stderr,
    metricsPort: () =>
      waitUntil(
        () => {
          if (child.exitCode !== null) throw new Error(`app exited: ${stderr}`);
          const line = logs.find((l) => l.event === 'singleshot_started');
          return (line?.metricsPort as number | undefined) ?? (line?.ingestPort as number | undefined);
        },
        `app ${only} to start`,
      ),
    metric: async (name, labels = {}) => {
      const port = await proc.metricsPort();
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      let sum = 0;
      for (const line of text.split('\n')) {
        if (!line.startsWith(name)) continue;
        const m = line.match(/^([a-z_]+)(\{([^}]*)\})? ([0-9.e+-]+)$/);
        if (!m || m[1] !== name) continue;
        const set = Object.fromEntries((m[3] ?? '').split(',').filter(Boolean).map((kv) => kv.split('=').map((s) => s.replace(/"/g, '')) as [string, string]));
        if (Object.entries(labels).every(([k, v]) => set[k] === v)) sum += Number(m[4]);
      }
      return sum;
    },
    signal: (sig) => child.kill(sig),
    exited: () => exit,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGCONT');
        child.kill('SIGKILL');
      }
      await exit;
    },
  };
  return proc;
}
