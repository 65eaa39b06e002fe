/** Span attribute values singleshot records (OpenTelemetry's primitive kinds). */
export type SpanAttributes = Record<string, string | number | boolean | undefined>;

/** One span, as the code on the hot paths sees it (the SDK's span stays inside otel-tracing.ts). */
export interface SpanRef {
  /** This span's W3C `traceparent`: what a job or a provider request carries on. */
  readonly traceparent: string;
  readonly traceId: string;
  readonly spanId: string;
  setAttributes(attributes: SpanAttributes): void;
  /** Links this span to another (a batch job's span to each member's). */
  link(other: SpanRef): void;
  /** Marks the span failed with the error's `code` (errors carry one) and records it. */
  fail(err: unknown): void;
  end(): void;
}

/** How a span is placed. */
export interface SpanOptions {
  /**
   * The parent: a `traceparent` carried in from another process (a job's
   * `trace`, a producer's header). Absent: the active span of this async
   * context, if any.
   */
  parent?: string | undefined;
  /** Start a new trace whatever is active (a batch job's own span). */
  root?: boolean;
  kind?: 'internal' | 'server' | 'client' | 'producer' | 'consumer';
  attributes?: SpanAttributes;
}

/**
 * The tracing implementation behind the helpers of spans.ts. Only one exists,
 * OpenTelemetry's (otel-tracing.ts), and it is loaded only when tracing is on:
 * with tracing off no SDK module is loaded and every helper returns after one
 * check of a module variable.
 */
export interface TracingImpl {
  startSpan(name: string, options: SpanOptions): SpanRef;
  /** Runs `fn` with `span` as the active span of its async context. */
  runIn<R>(span: SpanRef, fn: () => R): R;
  /** The active span's ids, for log lines. */
  activeIds(): { trace_id: string; span_id: string } | undefined;
  /** Sets attributes on the active span, if any. */
  annotateActive(attributes: SpanAttributes): void;
  /** The active span's `traceparent`. */
  activeTraceparent(): string | undefined;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}
