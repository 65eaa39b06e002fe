import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLI_MAIN,
  REPO_ROOT,
  freePort,
  startHttpSink,
  startTestRedis,
  testConfig,
  waitUntil,
  writeConfigFile,
  type HttpSink,
  type TestRedis,
} from '@singleshot/test-harness';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// `singleshot start --processes 3`: one command, the apps in child processes,
// one Ctrl-C (SIGINT to the command) stops them all; a killed command takes its
// children with it.
describe('singleshot start over several processes', () => {
  let redis: TestRedis;
  let sink: HttpSink;
  let file: string;
  let cleanup: () => void;
  let ingestPort: number;

  beforeAll(async () => {
    redis = await startTestRedis();
    sink = await startHttpSink();
    ingestPort = await freePort();
    const config = testConfig({
      redisUrl: redis.url,
      routes: [{ name: 'orders', match: { source: 'shop', type: 'order.created' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { subject: 'Order {{data.orderId}}', text: 'Order {{data.orderId}}' } }],
      providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 2000 }] },
    });
    const written = writeConfigFile({ ...config, log: { level: 'info' }, ingest: { port: ingestPort, host: '127.0.0.1' } });
    file = written.file;
    cleanup = written.cleanup;
  });

  afterAll(async () => {
    await sink?.close();
    await redis?.destroy();
    cleanup?.();
  });

  function start(): { child: ChildProcess; pids: number[]; events: { event: string; pid: number }[] } {
    const child = spawn(process.execPath, [CLI_MAIN, 'start', '--only', 'ingest,decision,delivery', '--processes', '3', '--config', file], {
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
    return { child, pids, events };
  }

  const exited = (child: ChildProcess) => new Promise<number | null>((r) => (child.exitCode !== null ? r(child.exitCode) : child.once('exit', (code) => r(code))));

  it('delivers through its child processes and stops them all on one SIGINT', async () => {
    const { child, pids } = start();
    await waitUntil(() => pids.length === 3, 'three app processes', { timeoutMs: 30_000 });
    await waitUntil(() => fetch(`http://127.0.0.1:${ingestPort}/healthz`).then((r) => r.ok, () => false), 'ingest healthy', { timeoutMs: 30_000 });
    const event = { id: 'evt-procs-1', source: 'shop', type: 'order.created', recipients: ['a@example.com'], data: { orderId: 'o-1' } };
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => fetch(`http://127.0.0.1:${ingestPort}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(event) })),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(5).fill(202));
    await waitUntil(() => sink.requests.length >= 1, 'the provider call', { timeoutMs: 30_000 });
    expect(new Set(pids).size).toBe(3);
    expect(pids.every(alive)).toBe(true);
    child.kill('SIGINT');
    expect(await exited(child)).toBe(0);
    expect(pids.some(alive)).toBe(false);
    expect(sink.requests).toHaveLength(1);
  });

  // systemd's default KillMode=control-group sends SIGTERM to every process of
  // the unit at once. Each child then has its own signal, and the supervisor's
  // stop must not be a second one: a second signal means "exit now", which
  // drops in-flight work instead of finishing or releasing it.
  it('stops gracefully when every process gets SIGTERM at once', async () => {
    const { child, pids, events } = start();
    await waitUntil(() => pids.length === 3, 'three app processes', { timeoutMs: 30_000 });
    await waitUntil(() => fetch(`http://127.0.0.1:${ingestPort}/healthz`).then((r) => r.ok, () => false), 'ingest healthy', { timeoutMs: 30_000 });
    await waitUntil(() => pids.every((pid) => events.some((e) => e.pid === pid && e.event === 'singleshot_started')), 'every app process started', { timeoutMs: 30_000 });
    for (const pid of [child.pid as number, ...pids]) process.kill(pid, 'SIGTERM');
    expect(await exited(child)).toBe(0);
    expect(pids.some(alive)).toBe(false);
    expect(events.filter((e) => e.event === 'shutdown_forced'), JSON.stringify({ sup: child.pid, pids })).toEqual([]);
    for (const pid of pids) expect(events).toContainEqual({ event: 'shutdown_complete', pid });
  });

  it('a SIGKILLed command does not leave its app processes running', async () => {
    const { child, pids } = start();
    await waitUntil(() => pids.length === 3, 'three app processes', { timeoutMs: 30_000 });
    await waitUntil(() => fetch(`http://127.0.0.1:${ingestPort}/healthz`).then((r) => r.ok, () => false), 'ingest healthy', { timeoutMs: 30_000 });
    child.kill('SIGKILL');
    await exited(child);
    await waitUntil(() => !pids.some(alive), 'the app processes to stop', { timeoutMs: 30_000 });
    expect(pids.some(alive)).toBe(false);
  });
});
