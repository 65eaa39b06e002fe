import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { childPids, exited, freePort, redisServerArgs } from '@singleshot/loadkit';

/** Ports below the kernel's ephemeral range: see `freePort` in @singleshot/loadkit. */
export { freePort };

/** Whether a TCP connect to the loopback port is answered. */
export function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.connect(port, '127.0.0.1', () => done(true));
  });
}

/** Polls `ok` every 100 ms for up to `seconds`; fails early when `child` exits. */
export async function waitFor(what: string, ok: () => Promise<boolean>, child?: ChildProcess, seconds = 30): Promise<void> {
  for (let i = 0; i < seconds * 10; i++) {
    if (await ok()) return;
    if (child && child.exitCode !== null) throw new Error(`bench: ${what} exited with ${child.exitCode}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`bench: ${what} did not start within ${seconds} s`);
}

export interface BenchServer {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * A throwaway redis-server: free port, temp dir, AOF on with the given fsync,
 * noeviction. `aofRewrite: false` turns off Redis's automatic AOF rewrite
 * (`auto-aof-rewrite-percentage 0`; the AOF is still written and fsynced):
 * only for the bench's diagnostic `--no-aof-rewrite`, never the measured
 * configuration.
 */
export async function startRedis(appendfsync: 'everysec' | 'always', aofRewrite = true): Promise<BenchServer> {
  const dir = mkdtempSync(join(tmpdir(), 'singleshot-bench-redis-'));
  const port = await freePort();
  const child = spawn('redis-server', redisServerArgs({ port, dir, appendfsync, aofRewrite }), { stdio: 'ignore' });
  await waitFor('redis-server', () => canConnect(port), child);
  return {
    url: `redis://127.0.0.1:${port}`,
    pid: child.pid ?? 0,
    stop: async () => {
      child.kill('SIGTERM');
      await exited(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function postgresBin(name: string): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) {
    const path = join(root, v, 'bin', name);
    if (existsSync(path)) return path;
  }
  throw new Error(`bench: ${name} not found under ${root} (install Debian's postgresql package)`);
}

/** PostgreSQL's major version, for the results file. */
export function postgresVersion(): string {
  const out = spawnSync(postgresBin('postgres'), ['--version'], { encoding: 'utf8' });
  return out.stdout.trim();
}

/**
 * Whether PostgreSQL on the loopback port answers a query. A listening socket
 * is not enough: a server still recovering or starting accepts the connection
 * and then refuses it ("the database system is starting up", SQLSTATE 57P03),
 * which a peer or an origin connecting at that moment takes for a failure.
 */
export async function answersQuery(port: number, user: string): Promise<boolean> {
  const client = new pg.Client({ host: '127.0.0.1', port, user, database: 'postgres', connectionTimeoutMillis: 1000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * A throwaway PostgreSQL cluster: `initdb` in a temp dir with default settings,
 * a free loopback port, its socket in the temp dir. initdb refuses root, so as
 * root the cluster runs as the `postgres` user.
 */
export async function startPostgres(): Promise<BenchServer> {
  const dir = mkdtempSync(join(tmpdir(), 'singleshot-bench-pg-'));
  const data = join(dir, 'data');
  const port = await freePort();
  const asRoot = process.getuid?.() === 0;
  const run = (bin: string, args: string[]) => (asRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args]) as [string, string[]];
  if (asRoot) {
    const ids = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    chownSync(dir, Number(ids.stdout.trim()), Number(gid.stdout.trim()));
    chmodSync(dir, 0o700);
  }
  const [initCmd, initArgs] = run(postgresBin('initdb'), ['-D', data, '-U', 'bench', '-A', 'trust', '-E', 'UTF8', '--no-instructions']);
  const init = spawnSync(initCmd, initArgs, { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`bench: initdb failed: ${init.stderr}`);
  const [cmd, args] = run(postgresBin('postgres'), ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1']);
  const child = spawn(cmd, args, { stdio: 'ignore' });
  await waitFor('postgres', () => answersQuery(port, 'bench'), child);
  // runuser forks the postmaster as its child; measure the postmaster's tree.
  let pid = child.pid ?? 0;
  if (asRoot) {
    for (let i = 0; i < 50; i++) {
      const kids = childPids(pid);
      if (kids[0]) {
        pid = kids[0];
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    url: `postgres://bench@127.0.0.1:${port}/postgres`,
    pid,
    stop: async () => {
      // SIGINT to the postmaster itself (runuser does not pass it on): a fast
      // shutdown that cuts the clients still connected.
      try {
        process.kill(pid, 'SIGINT');
      } catch {
        // already gone
      }
      await exited(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
