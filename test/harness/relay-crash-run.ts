import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CLI_MAIN, REPO_ROOT, type AppProcess } from './fleet';
import { waitUntil } from './free-port';

/** One test event as a source message body carries it (the relay's default mapping). */
export interface RelayTestEvent {
  id: string;
  type: string;
  recipients: string[];
  data: { orderId: string };
}

/** `count` events of source `shop`, type `order.created`, one recipient each, ids `<prefix>-<i>`. */
export function relayTestEvents(prefix: string, count: number): RelayTestEvent[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `${prefix}-${i}`,
    type: 'order.created',
    recipients: [`${prefix}-${i}@example.com`],
    data: { orderId: `o-${prefix}-${i}` },
  }));
}

export interface RelayCrashRunOptions {
  configFile: string;
  events: RelayTestEvent[];
  /** Publishes a chunk of events, each one twice (at-least-once producers). */
  publish(chunk: RelayTestEvent[]): Promise<void>;
  /** SIGKILLs of the relay, at random moments, each followed by a new relay process (at least this many). */
  minKills: number;
  /** Runs once, after half the events were published (a broker restart). */
  midRun?: () => Promise<void>;
  /** Events per chunk and the pause between chunks: publishing spans the kills. */
  chunk?: number;
  pauseMs?: number;
  /** Extra relay processes running in parallel the whole time (never killed). */
  steadyRelays?: number;
}

export interface RelayCrashRun {
  kills: number;
  /** The relay process left running (stop it at the end). */
  relays: AppProcess[];
  publishMs: number;
}

export const RELAY_MAIN = join(REPO_ROOT, 'dist/apps/relay/main.js');

/** The route and webhook provider that turn each relay test event (`shop`, `order.created`) into one notification at `sink`. */
export function relayRouteToSink(sink: { url: string; lookupUrl: string }): { routes: unknown[]; providers: Record<string, unknown> } {
  return {
    routes: [{ name: 'orders', match: { source: 'shop', type: 'order.created' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { subject: 'Order {{data.orderId}}', text: 'Order {{data.orderId}}' } }],
    providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 2000 }] },
  };
}

/**
 * The relay alone, as a container runs it (`node dist/apps/relay/main.js`,
 * config from SINGLESHOT_CONFIG, health and metrics on a free port), killable
 * with real signals.
 */
export function spawnRelay(configFile: string, env: Record<string, string> = {}): AppProcess {
  const child = spawn(process.execPath, [RELAY_MAIN], {
    cwd: REPO_ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', SINGLESHOT_CONFIG: configFile, METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  let buffer = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        logs.push({ raw: line });
      }
    }
  });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  // `close`: after stdout is read to its end too, so the relay's last lines are in `logs`.
  const exit = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  const metricsPort = () =>
    waitUntil(() => {
      if (child.exitCode !== null) throw new Error(`relay exited: ${stderr}`);
      return logs.find((l) => l.event === 'relay_started')?.metricsPort as number | undefined;
    }, 'the relay to start');
  return {
    child,
    pid: child.pid as number,
    logs,
    stderr: () => stderr,
    metricsPort,
    metric: async (name, labels = {}) => {
      const text = await (await fetch(`http://127.0.0.1:${await metricsPort()}/metrics`)).text();
      let sum = 0;
      for (const line of text.split('\n')) {
        const m = line.match(/^([a-z_]+)(\{([^}]*)\})? ([0-9.e+-]+)$/);
        if (!m || m[1] !== name) continue;
        const set = Object.fromEntries((m[3] ?? '').split(',').filter(Boolean).map((kv) => kv.split('=').map((s) => s.replace(/"/g, '')) as [string, string]));
        if (Object.entries(labels).every(([k, v]) => set[k] === v)) sum += Number(m[4]);
      }
      return sum;
    },
    signal: (sig) => child.kill(sig),
    exited: () => exit,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exit;
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The crash run every source's done-when test shares: publishes the events
 * in chunks while a relay (`node dist/apps/relay/main.js`) is SIGKILLed at
 * random and started again, at least `minKills` times, and runs `midRun`
 * once halfway. The caller then waits for the notifications and checks
 * that every message was acknowledged.
 */
export async function runRelayCrash(opts: RelayCrashRunOptions): Promise<RelayCrashRun> {
  const chunk = opts.chunk ?? 100;
  const pauseMs = opts.pauseMs ?? 500;
  const relays: AppProcess[] = [];
  for (let i = 0; i < (opts.steadyRelays ?? 0); i++) relays.push(spawnRelay(opts.configFile));
  let victim = spawnRelay(opts.configFile);
  let publishing = true;
  let kills = 0;
  let seed = 11;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const killer = (async () => {
    while (publishing || kills < opts.minKills) {
      // Killed at a random moment once it consumes (started, connected).
      await victim.metricsPort().catch(() => undefined);
      await sleep(200 + rand() * 1300);
      victim.signal('SIGKILL');
      await victim.exited();
      kills++;
      victim = spawnRelay(opts.configFile);
    }
  })();
  const started = Date.now();
  try {
    for (let i = 0; i < opts.events.length; i += chunk) {
      await opts.publish(opts.events.slice(i, i + chunk));
      if (opts.midRun && i < opts.events.length / 2 && i + chunk >= opts.events.length / 2) await opts.midRun();
      await sleep(pauseMs);
    }
  } finally {
    publishing = false;
  }
  const publishMs = Date.now() - started;
  await killer;
  relays.push(victim);
  return { kills, relays, publishMs };
}

/** `singleshot dlq list --json` as an operator runs it: the dead records. */
export async function dlqListJson(configFile: string): Promise<Array<{ operationKey: string; reason: string; error: { code: string; message: string }; job: Record<string, unknown> }>> {
  const { stdout } = await promisify(execFile)(process.execPath, [CLI_MAIN, 'dlq', 'list', '--json', '--config', configFile], {
    cwd: REPO_ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn' },
  });
  return (JSON.parse(stdout) as { dead: Array<{ operationKey: string; reason: string; error: { code: string; message: string }; job: Record<string, unknown> }> }).dead;
}

/**
 * "Nothing acknowledged that was not accepted", checked at the origin: with
 * singleshot's Redis down, publishes messages once (no second copy to make
 * up for a lost one), waits until a relay has failed to accept one (a
 * `result="retry"` sample), SIGKILLs every relay, and asks the origin how many
 * of them are still unacknowledged (`held`: all of them, when nothing was
 * acknowledged early). Then starts a new relay and brings Redis back.
 */
export async function killRelaysDuringOutage(opts: {
  redis: { kill9(): Promise<void>; restart(): Promise<void> };
  relays: AppProcess[];
  configFile: string;
  source: string;
  publishOnce(): Promise<void>;
  held(): Promise<number>;
}): Promise<{ held: number; relay: AppProcess }> {
  const retries = () => Promise.all(opts.relays.map((r) => r.metric('singleshot_source_messages_total', { source: opts.source, result: 'retry' })));
  const before = await retries();
  await opts.redis.kill9();
  await opts.publishOnce();
  await waitUntil(async () => (await retries()).some((n, i) => n > (before[i] ?? 0)), 'a relay to fail an acceptance while Redis is down', { timeoutMs: 30_000, intervalMs: 100 });
  for (const relay of opts.relays) {
    relay.signal('SIGKILL');
    await relay.exited();
  }
  const held = await opts.held();
  const relay = spawnRelay(opts.configFile);
  await opts.redis.restart();
  return { held, relay };
}
