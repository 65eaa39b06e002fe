import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  defaultTextMapGetter,
  trace,
  type Context,
  type Span,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, ParentBasedSampler, SimpleSpanProcessor, TraceIdRatioBasedSampler, TracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { SpanAttributes, SpanOptions, SpanRef, TracingImpl } from './tracing-api';

/** What the OpenTelemetry implementation is built from. */
export interface OtelTracingOptions {
  serviceName: string;
  serviceVersion: string;
  /** The traces URL; undefined: the exporter reads `OTEL_EXPORTER_OTLP_*`. */
  url: string | undefined;
  sampleRatio: number;
  /** Tests: export each span at once to this exporter (the SDK's in-memory one) instead of OTLP. */
  exporter?: SpanExporter;
}

const KINDS = { internal: SpanKind.INTERNAL, server: SpanKind.SERVER, client: SpanKind.CLIENT, producer: SpanKind.PRODUCER, consumer: SpanKind.CONSUMER } as const;

/**
 * OpenTelemetry's SDK behind TracingImpl: a tracer provider with a batch span
 * processor and the OTLP/HTTP exporter (JSON bodies), AsyncLocalStorage as the
 * context manager, W3C Trace Context as the propagation format. Loaded only by
 * startTracing when tracing is on (a dynamic import), so a process that does
 * not trace never loads the SDK.
 */
export function createOtelTracing(options: OtelTracingOptions): TracingImpl {
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  const propagator = new W3CTraceContextPropagator();
  const resource = resourceFromAttributes({
    [ATTR_SERVICE_NAME]: process.env.OTEL_SERVICE_NAME || options.serviceName,
    ...(options.serviceVersion ? { [ATTR_SERVICE_VERSION]: options.serviceVersion } : {}),
    'process.pid': process.pid,
  }).merge(detectResources({ detectors: [envDetector] }));
  const processor = options.exporter
    ? new SimpleSpanProcessor({ exporter: options.exporter })
    : new BatchSpanProcessor({ exporter: new OTLPTraceExporter(options.url ? { url: options.url } : {}), ...batchOptions(process.env) });
  const provider = new TracerProvider({
    resource,
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(options.sampleRatio) }),
    spanProcessors: [processor],
  });
  trace.setGlobalTracerProvider(provider);
  const tracer = provider.getTracer('singleshot');
  const parentOf = (traceparent: string): Context => propagator.extract(ROOT_CONTEXT, { traceparent }, defaultTextMapGetter);
  return {
    startSpan(name: string, opts: SpanOptions): SpanRef {
      const parent = opts.root ? ROOT_CONTEXT : opts.parent ? parentOf(opts.parent) : context.active();
      const span = tracer.startSpan(name, { kind: KINDS[opts.kind ?? 'internal'], ...(opts.attributes ? { attributes: clean(opts.attributes) } : {}) }, parent);
      return new OtelSpan(span);
    },
    runIn<R>(span: SpanRef, fn: () => R): R {
      return context.with(trace.setSpan(context.active(), (span as OtelSpan).span), fn);
    },
    activeIds() {
      const span = trace.getSpan(context.active());
      if (!span) return undefined;
      const { traceId, spanId } = span.spanContext();
      return { trace_id: traceId, span_id: spanId };
    },
    annotateActive(attributes: SpanAttributes) {
      trace.getSpan(context.active())?.setAttributes(clean(attributes));
    },
    activeTraceparent() {
      const span = trace.getSpan(context.active());
      return span ? traceparentOf(span) : undefined;
    },
    async shutdown() {
      await provider.shutdown();
      contextManager.disable();
      trace.disable();
      context.disable();
    },
  };
}

/** The SDK span behind a SpanRef. */
class OtelSpan implements SpanRef {
  readonly traceparent: string;

  constructor(readonly span: Span) {
    this.traceparent = traceparentOf(span);
  }

  get traceId(): string {
    return this.span.spanContext().traceId;
  }

  get spanId(): string {
    return this.span.spanContext().spanId;
  }

  setAttributes(attributes: SpanAttributes): void {
    this.span.setAttributes(clean(attributes));
  }

  link(other: SpanRef): void {
    this.span.addLink({ context: (other as OtelSpan).span.spanContext() });
  }

  fail(err: unknown): void {
    const code = (err as { code?: unknown } | null)?.code;
    if (typeof code === 'string') this.span.setAttribute('error.type', code);
    this.span.recordException(err instanceof Error ? err : String(err));
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  }

  end(): void {
    this.span.end();
  }
}

function traceparentOf(span: Span): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${(traceFlags & 1) === 1 ? '01' : '00'}`;
}

/**
 * The standard `OTEL_BSP_*` variables: this SDK version takes them as options
 * only, and an operator expects them to work as in every other service.
 */
function batchOptions(env: NodeJS.ProcessEnv): { scheduledDelayMillis?: number; maxQueueSize?: number; maxExportBatchSize?: number; exportTimeoutMillis?: number } {
  const read = (name: string): number | undefined => {
    const value = Number(env[name]);
    return env[name] !== undefined && Number.isInteger(value) && value > 0 ? value : undefined;
  };
  const options = {
    scheduledDelayMillis: read('OTEL_BSP_SCHEDULE_DELAY'),
    maxQueueSize: read('OTEL_BSP_MAX_QUEUE_SIZE'),
    maxExportBatchSize: read('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
    exportTimeoutMillis: read('OTEL_BSP_EXPORT_TIMEOUT'),
  };
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
}

/** Drops undefined values (OpenTelemetry keeps only primitive attribute values). */
function clean(attributes: SpanAttributes): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) out[key] = value;
  return out;
}
