import { spawn } from 'node:child_process';
import { waitUntil } from './free-port';

/**
 * A throwaway Kafka for one test file: librdkafka's mock cluster (3 brokers
 * on free loopback ports), which `kcat` starts and keeps up while it consumes
 * a topic of its own. It keeps everything in memory: a restart would lose the
 * log, so tests fault the relays (kills, rebalances), never this broker.
 */
export interface TestKafka {
  /** `127.0.0.1:<port>` of each broker. */
  readonly brokers: string[];
  destroy(): Promise<void>;
}

/** Starts `kcat -X test.mock.num.brokers=3` and reads the brokers' addresses from its log. */
export async function startTestKafka(): Promise<TestKafka> {
  const child = spawn('kcat', ['-X', 'test.mock.num.brokers=3', '-b', 'localhost:1', '-C', '-t', 'singleshot-test-keepalive', '-q'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    // Only the start matters; the rest would grow without bound.
    if (log.length < 64_000) log += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let spawnError: Error | undefined;
  child.once('error', (err) => (spawnError = err));
  const destroy = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  try {
    const brokers = await waitUntil(() => {
      if (spawnError) throw new Error(`kcat did not start (${spawnError.message}); it is the apt package kcat`);
      if (child.exitCode !== null) throw new Error(`kcat exited with ${child.exitCode}: ${log}`);
      const m = log.match(/replaced with ((?:127\.0\.0\.1:\d+,?)+)/);
      return m?.[1]?.split(',').filter(Boolean);
    }, 'the Kafka mock cluster to start', { timeoutMs: 30_000, intervalMs: 50 });
    return { brokers, destroy };
  } catch (err) {
    await destroy();
    throw err;
  }
}
