import type { SpanAttributes, SpanOptions, SpanRef } from './tracing-api';
import { tracingImpl } from './tracing-state';

/**
 * Runs `fn` inside a new span that ends when `fn` settles (failed when it
 * throws). With tracing off, `fn` runs at once with no span: callers on hot
 * paths check `tracingOn()` first so they do not even build `options`.
 */
export async function withSpan<R>(name: string, options: SpanOptions, fn: (span: SpanRef | undefined) => Promise<R>): Promise<R> {
  const impl = tracingImpl();
  if (!impl) return fn(undefined);
  const span = impl.startSpan(name, options);
  try {
    return await impl.runIn(span, () => fn(span));
  } catch (err) {
    span.fail(err);
    throw err;
  } finally {
    span.end();
  }
}

/** The active span's `traceparent` (what a job or a provider request carries on); undefined when tracing is off or no span is active. */
export function currentTraceparent(): string | undefined {
  return tracingImpl()?.activeTraceparent();
}

/** What logTraceFields returns when no span is active: one frozen object, never written to. */
export const NO_TRACE_FIELDS: Readonly<Record<string, string>> = Object.freeze({});

/**
 * `trace_id` and `span_id` of the active span, for every log line (pino's
 * `mixin`, with a merge that leaves NO_TRACE_FIELDS alone); the shared
 * NO_TRACE_FIELDS when tracing is off or no span is active.
 */
export function logTraceFields(): Readonly<Record<string, string>> {
  const impl = tracingImpl();
  if (!impl) return NO_TRACE_FIELDS;
  return impl.activeIds() ?? NO_TRACE_FIELDS;
}

/** Sets attributes on the active span; a no-op when tracing is off (check `tracingOn()` before building `attributes` on a hot path). */
export function annotateActive(attributes: SpanAttributes): void {
  tracingImpl()?.annotateActive(attributes);
}

/**
 * Gives each job the active span's `traceparent` (the decision's span, for
 * the deliver and render jobs it makes), so the next process's span joins
 * the trace. Returns the same array; with tracing off it changes nothing.
 */
export function stampTrace<T extends { trace?: string | undefined }>(jobs: T[]): T[] {
  const traceparent = currentTraceparent();
  if (traceparent !== undefined) for (const job of jobs) job.trace = traceparent;
  return jobs;
}
