import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  REPO_ROOT,
  startHttpSink,
  startTestRedis,
  testConfig,
  waitUntil,
  writeConfigFile,
  type HttpSink,
  type TestRedis,
} from '@singleshot/test-harness';

// Each app runs alone, one container each (`node dist/apps/<app>/main.js`), and
// the three together, sharing nothing but Redis, still deliver exactly once.
// Two delivery processes share one host through METRICS_PORT=0.
describe('apps run alone', () => {
  let redis: TestRedis;
  let sink: HttpSink;
  let cleanup: () => void;
  let configFile: string;
  const children: { name: string; child: ChildProcess; lines: Record<string, unknown>[] }[] = [];

  const run = (app: string, env: Record<string, string>) => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'dist/apps', app, 'main.js')], {
      env: { ...process.env, LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const lines: Record<string, unknown>[] = [];
    let buffer = '';
    child.stdout?.on('data', (c: Buffer) => {
      buffer += c.toString();
      const parts = buffer.split('\n');
      buffer = parts.pop() ?? '';
      for (const part of parts) {
        try {
          lines.push(JSON.parse(part) as Record<string, unknown>);
        } catch {
          lines.push({ raw: part });
        }
      }
    });
    children.push({ name: app, child, lines });
    return lines;
  };

  beforeAll(async () => {
    redis = await startTestRedis();
    sink = await startHttpSink();
    const written = writeConfigFile(
      testConfig({
        redisUrl: redis.url,
        routes: [{ name: 'orders', match: { source: 'shop' }, action: 'notify', channel: 'webhook', recipients: 'event' }],
        providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl }] },
      }),
    );
    cleanup = written.cleanup;
    configFile = written.file;
  });

  afterAll(async () => {
    for (const { child } of children) {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    await sink?.close();
    await redis?.destroy();
    cleanup?.();
  });

  it('ingest, decision and two delivery processes deliver one event once, and each stops cleanly on SIGTERM', async () => {
    const env = { SINGLESHOT_CONFIG: configFile, METRICS_PORT: '0', PORT: '0' };
    const ingestLog = run('ingest', env);
    const decisionLog = run('decision', env);
    const deliveryLogs = [run('delivery', env), run('delivery', env)];
    const port = await waitUntil(() => ingestLog.find((l) => l.event === 'ingest_listening')?.port as number | undefined, 'ingest to listen');
    const metricsPorts = await waitUntil(
      () => {
        const ports = [decisionLog, ...deliveryLogs].map((log) => log.find((l) => typeof l.metricsPort === 'number')?.metricsPort as number | undefined);
        return ports.every((p) => p !== undefined) ? (ports as number[]) : undefined;
      },
      'decision and delivery health servers',
    );
    expect(new Set(metricsPorts).size).toBe(3);
    for (const p of metricsPorts) {
      const res = await fetch(`http://127.0.0.1:${p}/readyz`);
      expect(res.status).toBe(200);
      // Ready means Redis answers and the app's worker runs (docs/contract.md /readyz).
      const { checks } = (await res.json()) as { checks: Record<string, string> };
      expect(checks.redis).toBe('ok');
      expect(Object.entries(checks).filter(([k]) => k.endsWith('-worker')).map(([, v]) => v)).toEqual(['running']);
    }

    const body = JSON.stringify({ id: 'alone-1', source: 'shop', type: 'order.created', recipients: ['x@example.com'], data: {} });
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => fetch(`http://127.0.0.1:${port}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })),
    );
    expect(answers.map((r) => r.status)).toEqual([202, 202, 202, 202, 202]);
    await sink.waitFor((s) => s.accepted.size === 1, { timeoutMs: 60_000, what: 'the notification' });
    expect([...sink.accepted.values()].map((a) => a.count)).toEqual([1]);

    const exits = children.map(({ child }) => new Promise<number | null>((r) => child.once('exit', (code) => r(code))));
    for (const { child } of children) child.kill('SIGTERM');
    expect(await Promise.all(exits)).toEqual(children.map(() => 0));
  });
});
