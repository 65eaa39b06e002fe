import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  REPO_ROOT,
  startHttpSink,
  startOtlpReceiver,
  startTestRedis,
  testConfig,
  waitUntil,
  writeConfigFile,
  type HttpSink,
  type OtlpReceiver,
  type ReceivedSpan,
  type TestRedis,
} from '@singleshot/test-harness';

// One event with two recipients through ingest, decision and delivery, each
// in its own process exporting to a real OTLP/HTTP receiver: one trace, from
// the producer's traceparent to the provider's request, and the batch deliver
// job in a trace of its own linked to each member's span.
describe('tracing across the fleet', () => {
  let redis: TestRedis;
  let sink: HttpSink;
  let receiver: OtlpReceiver;
  let cleanup: () => void;
  let configFile: string;
  const children: { app: string; child: ChildProcess; lines: Record<string, unknown>[] }[] = [];

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
    children.push({ app, child, lines });
    return lines;
  };

  beforeAll(async () => {
    redis = await startTestRedis();
    sink = await startHttpSink();
    receiver = await startOtlpReceiver();
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
    for (const { child } of children) if (child.exitCode === null) child.kill('SIGKILL');
    await sink?.close();
    await receiver?.close();
    await redis?.destroy();
    cleanup?.();
  });

  it('one event, two recipients: one trace from the producer through three processes to the provider, and a batch span linked to both members', async () => {
    const env = {
      SINGLESHOT_CONFIG: configFile,
      METRICS_PORT: '0',
      PORT: '0',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '100',
    };
    const ingestLog = run('ingest', env);
    const decisionLog = run('decision', env);
    const deliveryLog = run('delivery', env);
    const port = await waitUntil(() => ingestLog.find((l) => l.event === 'ingest_listening')?.port as number | undefined, 'ingest to listen', { timeoutMs: 20_000 });
    for (const log of [ingestLog, decisionLog, deliveryLog]) await waitUntil(() => log.some((l) => l.event === 'tracing_enabled'), 'tracing_enabled at start', { timeoutMs: 20_000 });
    await waitUntil(() => decisionLog.some((l) => l.event === 'app_started') && deliveryLog.some((l) => l.event === 'app_started'), 'workers to start', { timeoutMs: 20_000 });

    const producerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const producerSpan = '00f067aa0ba902b7';
    const res = await fetch(`http://127.0.0.1:${port}/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${producerTrace}-${producerSpan}-01` },
      body: JSON.stringify({ id: 'traced-1', source: 'shop', type: 'order.created', recipients: ['a@example.com', 'b@example.com'], data: {} }),
    });
    expect(res.status).toBe(202);
    await sink.waitFor((s) => s.accepted.size === 2, { timeoutMs: 30_000, what: 'both notifications' });

    const named = (name: string) => receiver.spans.filter((s) => s.name === name);
    await waitUntil(() => named('commit').length === 2 && named('deliver.batch').length === 1 && named('deliver').length === 2 || undefined, 'the spans to be exported', { timeoutMs: 15_000 });
    expect(receiver.rejected).toEqual([]);
    const one = (name: string): ReceivedSpan => {
      const spans = named(name);
      expect(spans, name).toHaveLength(1);
      return spans[0] as ReceivedSpan;
    };

    const accept = one('ingest.accept');
    expect(accept).toMatchObject({ service: 'singleshot-ingest', traceId: producerTrace, parentSpanId: producerSpan });
    expect(accept.attributes['singleshot.result']).toBe('accepted');
    const decide = one('decide');
    expect(decide).toMatchObject({ service: 'singleshot-decision', traceId: producerTrace, parentSpanId: accept.spanId });
    expect(decide.attributes).toMatchObject({ 'singleshot.routes': 'orders', 'singleshot.operations': 2, 'singleshot.outcome': 'decided' });

    const delivers = named('deliver');
    for (const d of delivers) expect(d).toMatchObject({ service: 'singleshot-delivery', traceId: producerTrace, parentSpanId: decide.spanId });
    expect(new Set(delivers.map((d) => d.attributes['singleshot.operation_key'])).size).toBe(2);
    const sends: ReceivedSpan[] = [];
    for (const d of delivers) {
      const children = receiver.spans.filter((s) => s.parentSpanId === d.spanId);
      expect(children.map((c) => c.name).sort()).toEqual(['claim', 'commit', 'provider.send']);
      for (const c of children) expect(c.traceId).toBe(producerTrace);
      const byName = Object.fromEntries(children.map((c) => [c.name, c]));
      expect(byName.claim?.attributes).toMatchObject({ 'singleshot.claim': 'go', 'singleshot.fence': '1' });
      expect(byName['provider.send']?.attributes).toMatchObject({ 'singleshot.provider': 'primary', 'singleshot.outcome': 'sent', 'singleshot.in_doubt': false });
      expect(byName.commit?.attributes).toMatchObject({ 'singleshot.status': 'sent', 'singleshot.fence': '1', 'singleshot.commit': 'ok' });
      sends.push(byName['provider.send'] as ReceivedSpan);
    }
    // Three processes: ingest, decision and delivery each exported their own spans.
    expect(new Set([accept.pid, decide.pid, delivers[0]?.pid]).size).toBe(3);

    // The provider's requests carry the trace on: their parent is the provider.send span.
    const posts = sink.requests.filter((r) => r.method === 'POST');
    expect(posts).toHaveLength(2);
    expect(posts.map((r) => r.headers.traceparent).sort()).toEqual(sends.map((s) => `00-${producerTrace}-${s.spanId}-01`).sort());

    // The batch deliver job is a trace of its own, linked to each member's span.
    const batch = one('deliver.batch');
    expect(batch.traceId).not.toBe(producerTrace);
    expect(batch.parentSpanId).toBe('');
    expect(batch.links.map((l) => `${l.traceId}/${l.spanId}`).sort()).toEqual(delivers.map((d) => `${d.traceId}/${d.spanId}`).sort());

    // Log lines written inside a span carry its ids.
    const ended = deliveryLog.filter((l) => l.event === 'delivery_ended');
    expect(ended.map((l) => `${String(l.trace_id)}/${String(l.span_id)}`).sort()).toEqual(delivers.map((d) => `${d.traceId}/${d.spanId}`).sort());
    expect(decisionLog.find((l) => l.event === 'decided')).toMatchObject({ trace_id: producerTrace, span_id: decide.spanId });

    const exits = children.map(({ child }) => new Promise<number | null>((r) => child.once('exit', (code) => r(code))));
    for (const { child } of children) child.kill('SIGTERM');
    expect(await Promise.all(exits)).toEqual(children.map(() => 0));
  });
});
