import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
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

// Metrics on a live fleet (ingest, decision, delivery and the dashboard in one
// `singleshot start` process): every metric deploy/ uses exists on /metrics, the
// counters move with real traffic, and a real Prometheus scraping the fleet
// returns the duplicates counter after a duplicate was posted.
const PROMETHEUS = '/usr/bin/prometheus';

let redis: TestRedis;
let sink: HttpSink;
let fleet: AppProcess;
let cleanup: () => void;
let ingest: string;
let dashboard: string;
let prometheus: { child: ChildProcess; url: string; dir: string } | undefined;

/** `# TYPE name kind` lines of a scrape: family name → kind. */
function families(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (m) out.set(m[1] as string, m[2] as string);
  }
  return out;
}

/** Sample lines of one series name (exact name, any labels). */
function samples(text: string, name: string): string[] {
  return text.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
}

async function startPrometheus(targets: string[]): Promise<{ child: ChildProcess; url: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'singleshot-prometheus-'));
  const port = await freePort();
  const config = join(dir, 'prometheus.yml');
  writeFileSync(
    config,
    [
      'global:',
      '  scrape_interval: 1s',
      '  evaluation_interval: 1s',
      'scrape_configs:',
      '  - job_name: singleshot',
      '    scrape_interval: 1s',
      '    scrape_timeout: 900ms',
      '    static_configs:',
      `      - targets: [${targets.map((t) => `'${t}'`).join(', ')}]`,
      '',
    ].join('\n'),
  );
  const child = spawn(
    PROMETHEUS,
    [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const url = `http://127.0.0.1:${port}`;
  await waitUntil(async () => {
    if (child.exitCode !== null) throw new Error(`prometheus exited: ${stderr}`);
    return (await fetch(`${url}/-/ready`)).ok;
  }, 'prometheus to be ready');
  return { child, url, dir };
}

async function promQuery(url: string, query: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>> {
  const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(query)}`);
  const body = (await res.json()) as { status: string; data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> } };
  if (body.status !== 'success') throw new Error(`query ${query} failed: ${JSON.stringify(body)}`);
  return body.data.result;
}

beforeAll(async () => {
  redis = await startTestRedis();
  sink = await startHttpSink();
  const written = writeConfigFile(
    testConfig({
      redisUrl: redis.url,
      dashboard: { port: 0, host: '127.0.0.1', auth: { username: 'ops', password: 'metrics-test-password' } },
      routes: [{ name: 'orders', match: { source: 'shop' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { subject: 'Order {{data.orderId}}', text: 'created' } }],
      providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 2000 }] },
    }),
  );
  cleanup = written.cleanup;
  fleet = spawnApps('ingest,decision,delivery,dashboard', written.file);
  ingest = `http://127.0.0.1:${await fleet.metricsPort()}`;
  const port = await waitUntil(() => fleet.logs.find((l) => l.event === 'dashboard_listening')?.port as number | undefined, 'the dashboard port');
  dashboard = `http://127.0.0.1:${port}`;

  // One event and one duplicate of it, delivered once.
  const event = { id: 'evt-metrics', source: 'shop', type: 'order.created', recipients: ['m@example.com'], data: { orderId: 'o-1' } };
  for (const expected of ['accepted', 'duplicate']) {
    const res = await fetch(`${ingest}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(event) });
    expect(((await res.json()) as { status: string }).status).toBe(expected);
  }
  await sink.waitFor((s) => s.accepted.size === 1, { timeoutMs: 30_000, what: 'the notification' });
});

afterAll(async () => {
  if (prometheus) {
    const exited = new Promise((r) => prometheus?.child.once('exit', r));
    prometheus.child.kill('SIGTERM');
    await exited;
    rmSync(prometheus.dir, { recursive: true, force: true });
  }
  await fleet?.stop();
  await sink?.close();
  await redis?.destroy();
  cleanup?.();
});

describe('metrics on a live fleet', () => {
  it('serves every metric that deploy/ (alert rules, Grafana) uses, on the ingest and the dashboard port', async () => {
    const used = readFileSync(join(REPO_ROOT, 'deploy/metrics-used.txt'), 'utf8').split('\n').map((l) => l.trim()).filter(Boolean);
    expect(used.length).toBeGreaterThan(10);
    for (const base of [ingest, dashboard]) {
      const res = await fetch(`${base}/metrics`);
      expect(res.status).toBe(200);
      const live = families(await res.text());
      // Histograms are listed by family (queries add _bucket, _sum, _count); `# TYPE` names the family.
      const missing = used.filter((name) => !live.has(name));
      expect(missing, `missing on ${base}/metrics`).toEqual([]);
      for (const name of used.filter((n) => n.endsWith('_seconds') && !n.includes('lag'))) expect(live.get(name), name).toBe('histogram');
      // Default process metrics are there too.
      expect(live.get('process_cpu_user_seconds_total')).toBe('counter');
    }
  });

  it('counts the event, its duplicate and the send, and fills the queue gauges from Redis', async () => {
    const text = await waitUntil(async () => {
      const body = await (await fetch(`${ingest}/metrics`)).text();
      return samples(body, 'singleshot_deliveries_total').length > 0 ? body : undefined;
    }, 'the send to be counted');
    expect(samples(text, 'singleshot_events_received_total')).toEqual([
      'singleshot_events_received_total{source="shop",result="accepted"} 1',
      'singleshot_events_received_total{source="shop",result="duplicate"} 1',
    ]);
    expect(samples(text, 'singleshot_duplicates_suppressed_total').map((l) => l.replace(/,reason="[^"]*"/, ''))).toEqual([
      'singleshot_duplicates_suppressed_total{stage="ingest"} 1',
    ]);
    expect(samples(text, 'singleshot_deliveries_total')).toEqual(['singleshot_deliveries_total{channel="webhook",provider="primary",result="sent"} 1']);
    expect(samples(text, 'singleshot_end_to_end_seconds_count')).toEqual(['singleshot_end_to_end_seconds_count{channel="webhook"} 1']);
    // Gauges read from Redis at scrape time: one series per queue and state, and the DLQ depth.
    const queueSeries = samples(text, 'singleshot_queue_jobs').map((l) => l.replace(/ \d+$/, ''));
    for (const queue of ['decide', 'deliver']) {
      for (const state of ['waiting', 'active', 'delayed', 'failed']) expect(queueSeries).toContain(`singleshot_queue_jobs{queue="${queue}",state="${state}"}`);
    }
    expect(samples(text, 'singleshot_dlq_depth')).toEqual(['singleshot_dlq_depth{queue="dead"} 0']);
    // Labels are bounded: no operation key, message key or address in any label value.
    const labelled = text.split('\n').filter((l) => l.startsWith('singleshot_'));
    expect(labelled.filter((l) => /[0-9a-f]{64}|@example\.com/.test(l))).toEqual([]);
  });

  it('a real Prometheus scraping the fleet returns the duplicates counter', async () => {
    prometheus = await startPrometheus([new URL(ingest).host]);
    const url = prometheus.url;
    await waitUntil(async () => (await promQuery(url, 'up{job="singleshot"}')).some((r) => r.value[1] === '1'), 'prometheus to scrape the fleet', { timeoutMs: 30_000, intervalMs: 250 });
    const result = await waitUntil(async () => {
      const r = await promQuery(url, 'sum by (stage) (singleshot_duplicates_suppressed_total)');
      return r.length > 0 ? r : undefined;
    }, 'the duplicates counter in prometheus', { timeoutMs: 30_000, intervalMs: 250 });
    expect(result.map((r) => [r.metric.stage, r.value[1]])).toEqual([['ingest', '1']]);
    // And the send it did not duplicate.
    const sent = await promQuery(url, 'sum(singleshot_deliveries_total{result="sent"})');
    expect(sent.map((r) => r.value[1])).toEqual(['1']);
  });
});
