import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startOrCleanUp, waitUntil } from './free-port';

/**
 * A throwaway `nats-server -js` for one suite: a free loopback port and its
 * JetStream store in a temp dir (never the machine's server on 4222).
 * `restart()` stops it and starts it again on the same store: file-backed
 * streams and durable consumers survive.
 */
export interface TestNats {
  /** `nats://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  restart(): Promise<void>;
  destroy(): Promise<void>;
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    // The server greets every connection with INFO once it is ready.
    socket.once('data', (chunk) => done(chunk.toString().startsWith('INFO')));
    socket.connect(port, '127.0.0.1');
  });
}

/** Starts nats-server with JetStream; with `token`, clients must present it (`--auth`). */
export async function startTestNats(options: { token?: string } = {}): Promise<TestNats> {
  const dir = mkdtempSync(join(tmpdir(), 'singleshot-test-nats-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    const auth = options.token !== undefined ? ['--auth', options.token] : [];
    const c = spawn('nats-server', ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', dir, ...auth], { stdio: 'ignore' });
    child = c;
    await waitUntil(async () => {
      if (c.exitCode !== null) throw new Error(`nats-server exited with ${c.exitCode}`);
      return answers(port);
    }, 'nats-server to listen', { timeoutMs: 30_000, intervalMs: 100 });
  };
  const stop = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const gone = new Promise<void>((r) => c.once('exit', () => r()));
    c.kill('SIGTERM');
    await gone;
    child = undefined;
  };
  await startOrCleanUp(start, async () => {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    restart: async () => {
      await stop();
      await start();
    },
    destroy: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
