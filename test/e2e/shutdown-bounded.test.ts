import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  CLI_MAIN,
  REPO_ROOT,
  freePort,
  spawnApps,
  startHttpSink,
  startTestRedis,
  testConfig,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type HttpSink,
  type TestRedis,
} from '@singleshot/test-harness';

// A stop is bounded by `shutdownTimeoutMs` even when Redis is gone: every app
// process leaves within it (plus a little for the exit itself), says what it
// abandoned, and nothing accepted is lost or sent twice once Redis and a fresh
// fleet are back. Without the bound, a process whose Redis died waits for the
// reconnect forever (the client connection queues commands while Redis is away).
const SHUTDOWN_TIMEOUT_MS = 3000;
const EXIT_BOUND_MS = SHUTDOWN_TIMEOUT_MS + 2000;
const APPS = ['ingest', 'decision', 'delivery', 'render'] as const;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The exit code, or `'running'` when the process has not exited within `boundMs`. */
function exitWithin(proc: { exited(): Promise<number | null> }, boundMs: number): Promise<number | null | 'running'> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([proc.exited(), new Promise<'running'>((r) => (timer = setTimeout(() => r('running'), boundMs)))]).finally(() => clearTimeout(timer));
}

let redis: TestRedis;
let sink: HttpSink;
let docsDir: string;
/** Set while a test has Redis stopped, so a failed test does not leave the next one without it. */
let redisDown = false;
const procs: AppProcess[] = [];
const cleanups: (() => void)[] = [];

function config(extra: Record<string, unknown> = {}): string {
  const written = writeConfigFile({
    ...testConfig({
      redisUrl: redis.url,
      ingest: { port: 0, host: '127.0.0.1', enqueueTimeoutMs: 2000 },
      delivery: { leaseMs: 4000, attempts: 10, backoffMs: [100, 200, 400], concurrency: 8, metricsPort: 0 },
      routes: [{ name: 'orders', match: { source: 'shop' }, action: 'notify', channel: 'webhook', recipients: 'event' }],
      providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 2000 }] },
      documents: { store: { type: 'fs', dir: docsDir } },
    }),
    shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS,
    ...extra,
  });
  cleanups.push(written.cleanup);
  return written.file;
}

function app(only: string, file: string): AppProcess {
  const p = spawnApps(only, file);
  procs.push(p);
  return p;
}

const post = (base: string, id: string) =>
  fetch(`${base}/v1/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id, source: 'shop', type: 'order.created', recipients: [`${id}@example.com`], data: {} }),
  });

/** Every event of `ids` was sent once: one idempotency key per recipient, accepted once by the provider. */
function sentOnce(ids: readonly string[]): { missing: string[]; twice: string[] } {
  const missing: string[] = [];
  const twice: string[] = [];
  for (const id of ids) {
    const keys = new Set(sink.requests.filter((r) => r.recipient === `${id}@example.com`).map((r) => r.idempotencyKey));
    const accepted = [...keys].map((k) => sink.accepted.get(k ?? '')?.count ?? 0);
    if (accepted.every((n) => n === 0)) missing.push(id);
    if (keys.size > 1 || accepted.some((n) => n > 1)) twice.push(id);
  }
  return { missing, twice };
}

beforeAll(async () => {
  redis = await startTestRedis({ appendfsync: 'always' });
  sink = await startHttpSink();
  docsDir = mkdtempSync(join(tmpdir(), 'singleshot-docs-'));
});

afterEach(async () => {
  await Promise.all(procs.splice(0).map((p) => p.stop()));
  sink.reset();
  if (redisDown) await redis.restart();
  redisDown = false;
});

afterAll(async () => {
  await sink?.close();
  await redis?.destroy();
  for (const cleanup of cleanups) cleanup();
  rmSync(docsDir, { recursive: true, force: true });
});

describe('shutdown with Redis gone', () => {
  it('Redis SIGKILLed, then SIGTERM: every app process exits within shutdownTimeoutMs; a fresh fleet completes everything accepted once', async () => {
    const file = config();
    const fleet = Object.fromEntries(APPS.map((name) => [name, app(name, file)])) as Record<(typeof APPS)[number], AppProcess>;
    const base = `http://127.0.0.1:${await fleet.ingest.metricsPort()}`;
    await Promise.all(APPS.map((name) => fleet[name].metricsPort()));
    // The provider takes its time: sends are in flight when Redis dies, and
    // their commits then wait for a Redis that is not there.
    sink.behave(() => ({ delayMs: 1500, then: 'ok' }));
    const ids = Array.from({ length: 20 }, (_, i) => `bounded-${i}`);
    const answers = await Promise.all(ids.map((id) => post(base, id)));
    expect(answers.map((r) => r.status)).toEqual(ids.map(() => 202));
    await sink.waitFor((s) => s.requests.length > 0, { what: 'a send in flight' });

    await redis.kill9();
    redisDown = true;
    for (const name of APPS) fleet[name].signal('SIGTERM');
    const codes = await Promise.all(APPS.map((name) => exitWithin(fleet[name], EXIT_BOUND_MS)));
    const byApp = Object.fromEntries(APPS.map((name, i) => [name, codes[i]]));
    for (const name of APPS) {
      expect(alive(fleet[name].pid), `${name} is gone`).toBe(false);
      const timedOut = fleet[name].logs.some((l) => l.event === 'shutdown_timeout');
      // Either it finished its stop (0) or it gave up at the deadline, said so, and exited 1.
      expect(byApp[name], `${name} exit code`).toBe(timedOut ? 1 : 0);
    }
    // The delivery process had sends in flight whose commits could not reach Redis: it gave up on them and counted them.
    expect(byApp.delivery).toBe(1);
    const abandoned = fleet.delivery.logs.find((l) => l.event === 'shutdown_timeout');
    expect(abandoned?.inFlightTotal).toBeGreaterThan(0);
    expect(abandoned?.timeoutMs).toBe(SHUTDOWN_TIMEOUT_MS);

    // Redis back on its AOF, a fresh fleet: every accepted event is sent, and once.
    await redis.restart();
    redisDown = false;
    sink.behave(() => 'ok');
    app('ingest,decision,render,delivery', file);
    await waitUntil(() => sentOnce(ids).missing.length === 0, 'every accepted event to be sent', { timeoutMs: 90_000 });
    expect(sentOnce(ids)).toEqual({ missing: [], twice: [] });
  });

  it('singleshot start SIGKILLed, then Redis stopped: every child process leaves within shutdownTimeoutMs', async () => {
    const ingestPort = await freePort();
    // A lease and a provider deadline far beyond the stop: the send is still in flight when the
    // supervisor dies and Redis goes, however long killing one and stopping the other takes on a
    // loaded machine (with the 2 s deadline above it could end in doubt first, and nothing was left
    // for the stop to give up on).
    const file = config({
      ingest: { port: ingestPort, host: '127.0.0.1', enqueueTimeoutMs: 2000 },
      log: { level: 'info' },
      delivery: { leaseMs: 60_000, attempts: 10, backoffMs: [100, 200, 400], concurrency: 8, metricsPort: 0 },
      providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 60_000 }] },
    });
    const child: ChildProcess = spawn(process.execPath, [CLI_MAIN, 'start', '--only', 'ingest,decision,delivery', '--processes', '3', '--config', file], {
      cwd: REPO_ROOT,
      env: { ...process.env, METRICS_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const pids: number[] = [];
    const events: { event: string; pid: number }[] = [];
    let buffer = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        try {
          const entry = JSON.parse(line) as { event?: string; pid?: number };
          if (entry.event === 'app_process_started' && typeof entry.pid === 'number') pids.push(entry.pid);
          else if (entry.event && typeof entry.pid === 'number') events.push({ event: entry.event, pid: entry.pid });
        } catch {
          // not a log line
        }
      }
    });
    const supervisorExit = new Promise<void>((r) => child.once('exit', () => r()));
    // The pipe ends when its last writer (the supervisor and every child inherit it) is gone and
    // every line before that has been read: a child's last line, written just before it exits, is
    // read only then, and a poll that sees the process gone can run before that read.
    let stdoutEnded = false;
    child.stdout?.once('end', () => (stdoutEnded = true));
    try {
      await waitUntil(() => pids.length === 3, 'three app processes', { timeoutMs: 30_000 });
      await waitUntil(() => pids.every((pid) => events.some((e) => e.pid === pid && e.event === 'singleshot_started')), 'every app process started', { timeoutMs: 30_000 });
      // A send the provider never answers: the delivery child has work in flight
      // whose ending (in doubt, after the provider timeout) needs Redis.
      // Only this event's send hangs: jobs the test before left in this Redis are answered, so they
      // cannot hold the delivery process's slots for the provider deadline while this one waits.
      sink.behave((req) => (req.recipient === 'orphaned@example.com' ? 'accept-then-hang' : 'ok'));
      expect((await post(`http://127.0.0.1:${ingestPort}`, 'orphaned')).status).toBe(202);
      // This event's own send: the delivery process may first end jobs the test before left in this
      // Redis, and a request of theirs is not one that stays in flight. A cold start of three app
      // processes on a loaded machine takes its time: the bound is generous, the wait ends when it is sent.
      await sink.waitFor((s) => s.requests.some((r) => r.recipient === 'orphaned@example.com'), { what: 'the send in flight', timeoutMs: 60_000 });

      child.kill('SIGKILL');
      await supervisorExit;
      await redis.stop();
      redisDown = true;
      const gone = await waitUntil(() => !pids.some(alive), 'every app process to leave', { timeoutMs: EXIT_BOUND_MS }).catch(() => false);
      expect(gone, JSON.stringify({ alive: pids.filter(alive) })).toBe(true);
      expect(pids.filter(alive)).toEqual([]);
      await waitUntil(() => stdoutEnded, 'the last log line of every process to be read', { timeoutMs: 10_000 });
      // Each child began its stop when its supervisor went away, and the one with a send in flight gave up at the deadline.
      for (const pid of pids) expect(events).toContainEqual({ event: 'shutdown_started', pid });
      expect(events.filter((e) => e.event === 'shutdown_timeout')).not.toEqual([]);
    } finally {
      for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
