import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { freePort, startOrCleanUp, waitUntil } from './free-port';

/** A throwaway PostgreSQL for one suite: `initdb` in a temp dir, a free loopback port (as bench/ starts its peer). */
export interface TestPostgres {
  /** `postgres://test@127.0.0.1:<port>/postgres` (trust auth, loopback only). */
  readonly url: string;
  readonly port: number;
  destroy(): Promise<void>;
}

function postgresBin(name: string): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) {
    const path = join(root, v, 'bin', name);
    if (existsSync(path)) return path;
  }
  throw new Error(`${name} not found under ${root} (install Debian's postgresql package)`);
}

/**
 * True once the server answers a query: a listening socket is not enough, a
 * server still starting up accepts the connection and then refuses it ("the
 * database system is starting up").
 */
async function answers(port: number): Promise<boolean> {
  const client = new Client({ host: '127.0.0.1', port, user: 'test', database: 'postgres', connectionTimeoutMillis: 1000 });
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

const exited = (p: ChildProcess) => new Promise<void>((r) => (p.exitCode !== null || p.signalCode !== null ? r() : p.once('exit', () => r())));

/**
 * Starts PostgreSQL with default settings in a temp dir. initdb refuses root,
 * so as root the cluster runs as the `postgres` user (`runuser`).
 */
export async function startTestPostgres(): Promise<TestPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'singleshot-test-pg-'));
  const data = join(dir, 'data');
  const port = await freePort();
  const asRoot = process.getuid?.() === 0;
  const run = (bin: string, args: string[]) => (asRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args]) as [string, string[]];
  if (asRoot) {
    const uid = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    chownSync(dir, Number(uid.stdout.trim()), Number(gid.stdout.trim()));
    chmodSync(dir, 0o700);
  }
  const [initCmd, initArgs] = run(postgresBin('initdb'), ['-D', data, '-U', 'test', '-A', 'trust', '-E', 'UTF8', '--no-instructions']);
  const init = spawnSync(initCmd, initArgs, { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  const [cmd, args] = run(postgresBin('postgres'), ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off']);
  const child = spawn(cmd, args, { stdio: 'ignore' });
  const destroy = async () => {
    // SIGINT to the postmaster itself (runuser does not pass it on): a fast
    // shutdown that cuts the clients still connected.
    try {
      const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      process.kill(postmaster, 'SIGINT');
    } catch {
      child.kill('SIGKILL');
    }
    await exited(child);
    rmSync(dir, { recursive: true, force: true });
  };
  await startOrCleanUp(async () => {
    await waitUntil(async () => {
      if (child.exitCode !== null) throw new Error(`postgres exited with ${child.exitCode}`);
      return answers(port);
    }, 'postgres to answer queries', { timeoutMs: 30_000, intervalMs: 100 });
  }, destroy);
  return { url: `postgres://test@127.0.0.1:${port}/postgres`, port, destroy };
}
