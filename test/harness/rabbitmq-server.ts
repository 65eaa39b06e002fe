import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startOrCleanUp, waitUntil } from './free-port';

/**
 * A throwaway RabbitMQ for one suite: its own node name, AMQP and
 * distribution ports, data, logs and Erlang cookie under a temp dir. Never
 * the machine's broker on 5672 (its epmd on 4369 is shared, which is why the
 * node name is unique). `restart()` stops it and starts it on the same data:
 * durable queues and persistent messages survive.
 */
export interface TestRabbitMq {
  /** `amqp://guest:guest@127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
  restart(): Promise<void>;
  destroy(): Promise<void>;
}

const SERVER = '/usr/lib/rabbitmq/bin/rabbitmq-server';

function answersAmqp(port: number): Promise<boolean> {
  // The listener opens last in the boot: a TCP connect that is answered means ready.
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.connect(port, '127.0.0.1', () => done(true));
  });
}

/** Starts RabbitMQ (10-20 s on a small machine). */
export async function startTestRabbitMq(): Promise<TestRabbitMq> {
  const dir = mkdtempSync(join(tmpdir(), 'singleshot-test-rabbit-'));
  const [port, distPort] = [await freePort(), await freePort()];
  for (const sub of ['home', 'mnesia', 'log']) mkdirSync(join(dir, sub));
  writeFileSync(join(dir, 'rabbitmq.conf'), `listeners.tcp.1 = 127.0.0.1:${port}\nloopback_users.guest = true\n`);
  writeFileSync(join(dir, 'enabled_plugins'), '[].\n');
  const env = {
    ...process.env,
    HOME: join(dir, 'home'),
    RABBITMQ_NODENAME: `singleshot-test-${port}@localhost`,
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
    RABBITMQ_PID_FILE: join(dir, 'rabbit.pid'),
  };
  let child: ChildProcess | undefined;
  const start = async () => {
    const c = spawn(SERVER, [], { cwd: dir, env, stdio: 'ignore', detached: true });
    child = c;
    await waitUntil(async () => {
      if (c.exitCode !== null) throw new Error(`rabbitmq-server exited with ${c.exitCode} (logs in ${dir}/log)`);
      return answersAmqp(port);
    }, 'rabbitmq-server to listen', { timeoutMs: 60_000, intervalMs: 200 });
  };
  const stop = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const gone = new Promise<void>((r) => c.once('exit', () => r()));
    // The whole process group (the script, beam, its port helpers): SIGTERM stops the node cleanly.
    process.kill(-(c.pid as number), 'SIGTERM');
    await gone;
    child = undefined;
  };
  await startOrCleanUp(start, async () => {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    url: `amqp://guest:guest@127.0.0.1:${port}`,
    port,
    start,
    stop,
    restart: async () => {
      await stop();
      await start();
    },
    destroy: async () => {
      await stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
