import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitUntil } from './free-port';

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

function canConnect(port: number): Promise<boolean> {
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
  await waitUntil(async () => {
    if (child.exitCode !== null) throw new Error(`postgres exited with ${child.exitCode}`);
    return canConnect(port);
  }, 'postgres to listen', { timeoutMs: 30_000, intervalMs: 100 });
  return {
    url: `postgres://test@127.0.0.1:${port}/postgres`,
    port,
    destroy: async () => {
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
    },
  };
}
