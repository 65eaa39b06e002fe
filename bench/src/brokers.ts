import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exited } from '@singleshot/loadkit';
import { canConnect, freePort, waitFor, type BenchServer } from './servers';

// The bench may import only libs/core of ours (eslint.config.mjs, type:bench),
// so it cannot use test/harness's starters; these start the same brokers the
// bench's way (servers.ts: free port, temp dir, stop removes the dir).

/**
 * A throwaway RabbitMQ: its own node name, AMQP and distribution ports, data,
 * logs and Erlang cookie under a temp dir (never the machine's broker on
 * 5672; epmd on 4369 is shared, hence the unique node name).
 */
export async function startRabbitMq(): Promise<BenchServer> {
  const dir = mkdtempSync(join(tmpdir(), 'singleshot-bench-rabbit-'));
  const [port, distPort] = [await freePort(), await freePort()];
  for (const sub of ['home', 'mnesia', 'log']) mkdirSync(join(dir, sub));
  writeFileSync(join(dir, 'rabbitmq.conf'), `listeners.tcp.1 = 127.0.0.1:${port}\nloopback_users.guest = true\n`);
  writeFileSync(join(dir, 'enabled_plugins'), '[].\n');
  const env = {
    ...process.env,
    HOME: join(dir, 'home'),
    RABBITMQ_NODENAME: `singleshot-bench-${port}@localhost`,
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
    RABBITMQ_PID_FILE: join(dir, 'rabbit.pid'),
  };
  const child = spawn('/usr/lib/rabbitmq/bin/rabbitmq-server', [], { cwd: dir, env, stdio: 'ignore', detached: true });
  // The AMQP listener opens last in the boot; a loaded machine takes a minute.
  await waitFor('rabbitmq-server', () => canConnect(port), child, 120);
  return {
    url: `amqp://guest:guest@127.0.0.1:${port}`,
    pid: child.pid ?? 0,
    stop: async () => {
      // The whole process group (the script, beam, its port helpers): SIGTERM stops the node cleanly.
      try {
        process.kill(-(child.pid as number), 'SIGTERM');
      } catch {
        // already gone
      }
      await exited(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A throwaway `nats-server -js`: a free loopback port, its JetStream store in a temp dir (never the machine's on 4222). */
export async function startNats(): Promise<BenchServer> {
  const dir = mkdtempSync(join(tmpdir(), 'singleshot-bench-nats-'));
  const port = await freePort();
  const child = spawn('nats-server', ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', dir], { stdio: 'ignore' });
  await waitFor('nats-server', () => canConnect(port), child);
  return {
    url: `nats://127.0.0.1:${port}`,
    pid: child.pid ?? 0,
    stop: async () => {
      child.kill('SIGTERM');
      await exited(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * librdkafka's mock cluster (3 brokers on free loopback ports, the log in
 * memory), which `kcat` starts and keeps up while it consumes a topic of its
 * own. `url` is the brokers' `host:port` list, comma-separated.
 */
export async function startKafka(): Promise<BenchServer> {
  const child = spawn('kcat', ['-X', 'test.mock.num.brokers=3', '-b', 'localhost:1', '-C', '-t', 'singleshot-bench-keepalive', '-q'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    if (log.length < 64_000) log += chunk.toString();
  });
  const brokers = () => log.match(/replaced with ((?:127\.0\.0\.1:\d+,?)+)/)?.[1]?.replace(/,$/, '');
  await waitFor('kcat (Kafka mock cluster)', async () => brokers() !== undefined, child);
  return {
    url: brokers() as string,
    pid: child.pid ?? 0,
    stop: async () => {
      child.kill('SIGKILL');
      await exited(child);
    },
  };
}
