import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMemberSpan, startBatchSpan } from './job-spans';
import { createOtelTracing } from './otel-tracing';
import { currentTraceparent, logTraceFields, NO_TRACE_FIELDS, stampTrace, withSpan } from './spans';
import { parseTraceparent } from './traceparent';
import { installTracing, tracingImpl } from './tracing-state';

// The OpenTelemetry SDK itself (not a stand-in), exporting to its in-memory exporter.
const exporter = new InMemorySpanExporter();

beforeAll(() => {
  installTracing(createOtelTracing({ serviceName: 'singleshot-test', serviceVersion: '', url: undefined, sampleRatio: 1, exporter }));
});

afterAll(async () => {
  const impl = tracingImpl();
  installTracing(undefined);
  await impl?.shutdown();
});

const finished = () => exporter.getFinishedSpans();
const byName = (name: string) => finished().filter((s) => s.name === name);

describe('OpenTelemetry tracing', () => {
  it('joins a carried traceparent, nests spans in one async context, and hands the active one on', async () => {
    exporter.reset();
    const producer = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const jobs: Array<{ trace?: string }> = [{}, {}];
    let inner: string | undefined;
    let fields: Readonly<Record<string, string>> = NO_TRACE_FIELDS;
    await withSpan('outer', { parent: producer }, async () => {
      await withSpan('inner', {}, async (span) => {
        await new Promise((r) => setTimeout(r, 1));
        inner = span?.traceparent;
        fields = logTraceFields();
        stampTrace(jobs);
      });
    });
    const [outer] = byName('outer');
    const [innerSpan] = byName('inner');
    expect(outer?.spanContext().traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(outer?.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
    expect(innerSpan?.parentSpanContext?.spanId).toBe(outer?.spanContext().spanId);
    expect(parseTraceparent(inner)).toMatchObject({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: innerSpan?.spanContext().spanId, sampled: true });
    expect(jobs.map((j) => j.trace)).toEqual([inner, inner]);
    expect(fields).toEqual({ trace_id: '4bf92f3577b34da6a3ce929d0e0e4736', span_id: innerSpan?.spanContext().spanId });
    // Outside every span: nothing active.
    expect(currentTraceparent()).toBeUndefined();
    expect(logTraceFields()).toBe(NO_TRACE_FIELDS);
  });

  it('gives each batch member its own trace and links the batch span to every member', async () => {
    exporter.reset();
    const a = '00-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-1111111111111111-01';
    const b = '00-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb-2222222222222222-01';
    const batch = startBatchSpan('deliver.batch', { 'singleshot.members': 2 });
    await Promise.all([a, b].map((trace) => runMemberSpan('deliver', trace, {}, async () => 'sent', (r) => r, batch)));
    batch?.end();
    const members = byName('deliver');
    expect(members.map((m) => m.spanContext().traceId).sort()).toEqual(['a'.repeat(32), 'b'.repeat(32)]);
    for (const m of members) expect(m.attributes['singleshot.outcome']).toBe('sent');
    const [batchSpan] = byName('deliver.batch');
    expect(batchSpan?.parentSpanContext).toBeUndefined();
    expect(batchSpan?.links.map((l) => l.context.spanId).sort()).toEqual(members.map((m) => m.spanContext().spanId).sort());
  });

  it('marks a span failed with the error code when its work throws', async () => {
    exporter.reset();
    const err = Object.assign(new Error('redis went away'), { code: 'STORE_UNAVAILABLE' });
    await expect(withSpan('claim', {}, async () => Promise.reject(err))).rejects.toBe(err);
    const [claim] = byName('claim');
    expect(claim?.status.code).toBe(2);
    expect(claim?.attributes['error.type']).toBe('STORE_UNAVAILABLE');
  });
});
