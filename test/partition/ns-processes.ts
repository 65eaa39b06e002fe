import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_MAIN, REPO_ROOT, waitUntil } from '@singleshot/test-harness';

/**
 * The processes of a partition run. Redis runs in the root namespace, bound
 * to loopback (the test's own reads) and to the root ends of the links (the
 * apps' only way in); each app runs inside its namespace with
 * `ip netns exec`, which execs node in place, so the child's pid is the app's
 * pid and signals reach it directly.
 */
export interface NsRedis {
  readonly port: number;
  /** `redis://127.0.0.1:<port>`, for the test's own reads (never through a link). */
  readonly localUrl: string;
  destroy(): Promise<void>;
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    let buffer = '';
    const done = (ok: boolean) => (socket.destroy(), resolve(ok));
    socket.setTimeout(1000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('data', (chunk) => {
      buffer += chunk.toString();
      if (buffer.includes('\r\n')) done(buffer.startsWith('+PONG'));
    });
    socket.connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
  });
}

/** A throwaway redis-server (AOF always, temp dir, noeviction) on `port`, bound to loopback and `addresses`. */
export async function startNsRedis(port: number, addresses: string[]): Promise<NsRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'singleshot-netns-redis-'));
  const args = [
    '--port', String(port),
    '--bind', '127.0.0.1', ...addresses,
    // Bound to loopback and to addresses that exist only on this run's veth links.
    '--protected-mode', 'no',
    '--dir', dir,
    '--appendonly', 'yes',
    '--appendfsync', 'always',
    '--save', '',
    '--maxmemory-policy', 'noeviction',
    '--daemonize', 'no',
    '--logfile', '',
    '--loglevel', 'warning',
  ];
  const child = spawn('redis-server', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const failed = new Promise<never>((_, reject) => child.once('error', (err) => reject(new Error(`cannot start redis-server: ${err.message}`))));
  await Promise.race([failed, waitUntil(() => ping(port), `redis-server on ${port} ${stderr}`, { timeoutMs: 30_000 })]);
  return {
    port,
    localUrl: `redis://127.0.0.1:${port}`,
    destroy: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One app process inside a namespace. */
export interface NsApp {
  readonly name: string;
  readonly pid: number;
  /** `event` fields of its JSON log lines, by event. */
  readonly events: Map<string, number>;
  /** Its warnings, errors and stderr (last lines), for failure reports. */
  tail(): string;
  /** Resolves with the `singleshot_started` line once it is logged. */
  started(): Promise<Record<string, unknown>>;
  /** Status of `GET <path>` on its health server (`/readyz`), read over `metricsHost`. */
  status(path: string): Promise<number>;
  /** Sum of one metric's samples whose labels include `labels`, read over `metricsHost`. */
  metric(name: string, labels?: Record<string, string>): Promise<number>;
  exitedEarly(): boolean;
  stop(): Promise<void>;
}

/** Starts `start --only <app>` inside `ns`; `metricsHost` is the address its metrics server listens on. */
export function spawnInNamespace(name: string, ns: string, app: string, configFile: string, metricsHost?: string): NsApp {
  if (!existsSync(CLI_MAIN)) throw new Error(`${CLI_MAIN} is missing: run \`npm run build\` first`);
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info' };
  // The config file is the only address source: nothing from the test's environment.
  delete env.REDIS_URL;
  delete env.PORT;
  delete env.METRICS_PORT;
  delete env.METRICS_HOST;
  const child: ChildProcess = spawn('ip', ['netns', 'exec', ns, process.execPath, CLI_MAIN, 'start', '--only', app, '--processes', '1', '--config', configFile], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const events = new Map<string, number>();
  const lines: string[] = [];
  const remember = (line: string) => {
    lines.push(line.slice(0, 600));
    if (lines.length > 40) lines.shift();
  };
  let startedLine: Record<string, unknown> | undefined;
  let stopping = false;
  let buffer = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      let parsed: Record<string, unknown> | undefined;
      try {
        parsed = JSON.parse(line) as Record<string, unknown>;
      } catch {
        remember(line);
        continue;
      }
      const event = parsed.event;
      if (typeof event === 'string') events.set(event, (events.get(event) ?? 0) + 1);
      if (event === 'singleshot_started') startedLine = parsed;
      if (typeof parsed.level === 'number' && parsed.level >= 40) remember(line);
    }
  });
  child.stderr?.on('data', (c: Buffer) => remember(c.toString()));
  const exit = new Promise<void>((r) => child.once('exit', () => r()));
  const running = () => child.exitCode === null && child.signalCode === null;

  const started = () =>
    waitUntil(
      () => {
        if (!running()) throw new Error(`${name} exited: ${lines.join('\n')}`);
        return startedLine;
      },
      `${name} to start`,
      { timeoutMs: 90_000 },
    );

  return {
    name,
    pid: child.pid as number,
    events,
    tail: () => lines.join('\n'),
    started,
    status: async (path) => {
      const port = (await started()).metricsPort as number;
      const res = await fetch(`http://${metricsHost ?? '127.0.0.1'}:${port}${path}`, { signal: AbortSignal.timeout(5000) });
      await res.text();
      return res.status;
    },
    metric: async (metricName, labels = {}) => {
      const port = (await started()).metricsPort as number;
      const text = await (await fetch(`http://${metricsHost ?? '127.0.0.1'}:${port}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
      let sum = 0;
      for (const line of text.split('\n')) {
        const m = /^([a-z_]+)(\{([^}]*)\})? ([0-9.e+-]+)$/.exec(line);
        if (!m || m[1] !== metricName) continue;
        const set = Object.fromEntries(
          (m[3] ?? '')
            .split(',')
            .filter(Boolean)
            .map((kv) => kv.split('=').map((s) => s.replace(/"/g, '')) as [string, string]),
        );
        if (Object.entries(labels).every(([k, v]) => set[k] === v)) sum += Number(m[4]);
      }
      return sum;
    },
    exitedEarly: () => !running() && !stopping,
    stop: async () => {
      stopping = true;
      if (running()) {
        child.kill('SIGCONT');
        child.kill('SIGKILL');
      }
      await exit;
    },
  };
}
