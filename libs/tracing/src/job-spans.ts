import type { SpanAttributes, SpanRef } from './tracing-api';
import { tracingImpl } from './tracing-state';

/**
 * One member of a queue job (a decide or deliver member, a render job) in its
 * own span, a child of the `traceparent` the member carries (`trace`, written
 * by the process that made it), so the member's work joins the trace of its
 * event even inside a batch of other events' members. With `batch`, the batch
 * job's span links to it: the batch is its own trace and mixes no members.
 * Callers check `tracingOn()` first; with tracing off this just runs `run`.
 */
export async function runMemberSpan<R>(
  name: string,
  trace: string | undefined,
  attributes: SpanAttributes,
  run: () => Promise<R>,
  outcomeOf: (result: R) => string,
  batch?: SpanRef,
): Promise<R> {
  const impl = tracingImpl();
  if (!impl) return run();
  const span = impl.startSpan(name, { parent: trace, kind: 'consumer', attributes });
  batch?.link(span);
  try {
    const result = await impl.runIn(span, run);
    span.setAttributes({ 'singleshot.outcome': outcomeOf(result) });
    return result;
  } catch (err) {
    span.fail(err);
    throw err;
  } finally {
    span.end();
  }
}

/** A batch job's own span: a new trace (its members belong to theirs), linked to each member's span. */
export function startBatchSpan(name: string, attributes: SpanAttributes): SpanRef | undefined {
  return tracingImpl()?.startSpan(name, { root: true, kind: 'consumer', attributes });
}
