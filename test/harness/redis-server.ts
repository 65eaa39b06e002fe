import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Socket } from 'node:net';
import { freePort, waitUntil } from './free-port';

/**
 * A throwaway Redis for one test suite: its own port, its own temp dir, AOF on,
 * `noeviction`. Never the machine's shared Redis on 6379.
 *
 * Uses testcontainers when a container runtime answers (SINGLESHOT_TESTCONTAINERS=1
 * forces the attempt, =0 disables it), else the local `redis-server` binary.
 * `kill9()` is a real SIGKILL; `restart()` starts again on the same AOF.
 */
export interface TestRedis {
  readonly url: string;
  readonly port: number;
  readonly dir: string;
  readonly backend: 'binary' | 'container';
  kill9(): Promise<void>;
  /** Stop gracefully (SIGTERM); `restart()` brings it back on the same data. */
  stop(): Promise<void>;
  restart(): Promise<void>;
  /** Stop and delete the data dir. */
  destroy(): Promise<void>;
}

export interface TestRedisOptions {
  appendfsync?: 'always' | 'everysec' | 'no';
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    let buffer = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('data', (chunk) => {
      buffer += chunk.toString();
      // While loading the AOF, Redis answers -LOADING; only +PONG means ready.
      if (buffer.includes('\r\n')) done(buffer.startsWith('+PONG'));
    });
    socket.connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
  });
}

async function containerRuntimeAnswers(): Promise<boolean> {
  if (process.env.SINGLESHOT_TESTCONTAINERS === '0') return false;
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

/** Starts a Redis for tests. */
export async function startTestRedis(options: TestRedisOptions = {}): Promise<TestRedis> {
  if (await containerRuntimeAnswers()) return startContainerRedis(options);
  return startBinaryRedis(options);
}

function redisArgs(port: number, dir: string, options: TestRedisOptions): string[] {
  return [
    '--port', String(port),
    '--bind', '127.0.0.1',
    '--dir', dir,
    '--appendonly', 'yes',
    '--appendfsync', options.appendfsync ?? 'always',
    '--save', '',
    '--maxmemory-policy', 'noeviction',
    '--daemonize', 'no',
    '--logfile', '',
    '--loglevel', 'warning',
  ];
}

async function startBinaryRedis(options: TestRedisOptions): Promise<TestRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'singleshot-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const launch = async () => {
    const proc = spawn('redis-server', redisArgs(port, dir, options), { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    proc.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    const spawnError = new Promise<never>((_, reject) =>
      proc.once('error', (err) =>
        reject(new Error(`cannot start redis-server (is it on PATH? apt-get install redis-server): ${err.message}`)),
      ),
    );
    exited = new Promise((resolve) => proc.once('exit', () => resolve()));
    child = proc;
    await Promise.race([spawnError, waitUntil(() => ping(port), `redis-server on port ${port} ${stderr}`, { timeoutMs: 30_000 })]);
  };

  const killWith = async (signal: NodeJS.Signals) => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
      await exited;
    }
    child = undefined;
  };

  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    backend: 'binary',
    kill9: () => killWith('SIGKILL'),
    stop: () => killWith('SIGTERM'),
    restart: async () => {
      await killWith('SIGTERM');
      await launch();
    },
    destroy: async () => {
      await killWith('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function startContainerRedis(options: TestRedisOptions): Promise<TestRedis> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const container = await new GenericContainer('redis:7')
    .withCommand(['redis-server', ...redisArgs(6379, '/data', options).filter((a) => a !== '127.0.0.1' && a !== '--bind')])
    .withExposedPorts(6379)
    .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
    .start();
  const port = container.getMappedPort(6379);
  const host = container.getHost();
  return {
    url: `redis://${host}:${port}`,
    port,
    dir: '/data',
    backend: 'container',
    // PID 1 is redis-server; SIGKILL it and the container stops with its volume kept.
    kill9: async () => {
      await container.exec(['kill', '-9', '1']).catch(() => undefined);
    },
    stop: async () => {
      await container.exec(['redis-cli', 'shutdown', 'nosave']).catch(() => undefined);
    },
    restart: async () => {
      await container.restart();
      await waitUntil(() => ping(container.getMappedPort(6379)), 'container redis');
    },
    destroy: async () => {
      await container.stop();
    },
  };
}
