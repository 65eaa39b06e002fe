import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { resolve } from 'node:path';

/** Thrown when no Redis can be reached or started; the message says how to get one. */
export class NoRedisError extends Error {
  readonly code = 'NO_REDIS';
}

export const NO_REDIS_HELP = [
  'singleshot needs Redis (>= 6.2) and found none:',
  '  - nothing answered at redis://127.0.0.1:6379, REDIS_URL is not set,',
  '  - and no redis-server is on PATH to start an embedded one.',
  'Get one of:',
  '  - Debian/Ubuntu: sudo apt-get install redis-server',
  '  - macOS: brew install redis',
  '  - Docker: docker run -p 6379:6379 redis:7 --appendonly yes --maxmemory-policy noeviction',
  'or point REDIS_URL at an existing server (redis:// or rediss://).',
].join('\n');

/** True when a Redis answers PING at host:port within `timeoutMs`. */
export function redisAnswers(url: string, timeoutMs = 1000): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((done) => {
    const socket = new Socket();
    let buffer = '';
    const finish = (ok: boolean) => {
      socket.destroy();
      done(ok);
    };
    socket.setTimeout(timeoutMs, () => finish(false));
    socket.on('error', () => finish(false));
    socket.on('data', (chunk) => {
      buffer += chunk.toString();
      // -NOAUTH still means "a Redis is there"; the app reports auth problems itself.
      if (buffer.includes('\r\n')) finish(buffer.startsWith('+PONG') || buffer.startsWith('-NOAUTH'));
    });
    socket.connect(Number(port || 6379), hostname.replace(/^\[|\]$/g, ''), () => socket.write('PING\r\n'));
  });
}

export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => done(port));
    });
  });
}

export interface EmbeddedRedis {
  url: string;
  dir: string;
  stop(): Promise<void>;
}

/**
 * Starts `redis-server` from PATH with its data under `<cwd>/.singleshot/redis`:
 * AOF on (everysec), noeviction, loopback only. The data survives restarts of
 * `singleshot start`, so dedup records and queued jobs do too.
 */
export async function startEmbeddedRedis(cwd = process.cwd()): Promise<EmbeddedRedis> {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) throw new NoRedisError(NO_REDIS_HELP);
  const dir = resolve(cwd, '.singleshot', 'redis');
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'everysec',
      '--save', '', '--maxmemory-policy', 'noeviction', '--daemonize', 'no', '--logfile', 'redis.log'],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const url = `redis://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  while (!(await redisAnswers(url, 500))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      throw new NoRedisError(`redis-server did not start (see ${dir}/redis.log)`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    dir,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}
