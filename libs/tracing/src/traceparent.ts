/**
 * W3C Trace Context `traceparent` values (https://www.w3.org/TR/trace-context/):
 * `00-<32 hex trace id>-<16 hex span id>-<2 hex flags>`. Pure: the story page
 * and the CLI read the trace id of a job's `trace` field with it, without the
 * SDK.
 */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The parts of a valid `traceparent`. */
export interface TraceParent {
  traceId: string;
  spanId: string;
  sampled: boolean;
}

/**
 * Parses a `traceparent`; undefined for anything else (a producer's header is
 * input: a bad one starts a new trace, it never fails the request). All-zero
 * ids and version `ff` are invalid by the spec.
 */
export function parseTraceparent(value: string | undefined | null): TraceParent | undefined {
  if (typeof value !== 'string' || value.length > 128) return undefined;
  const m = TRACEPARENT.exec(value.trim().toLowerCase());
  if (!m) return undefined;
  const [, version, traceId, spanId, flags] = m as unknown as [string, string, string, string, string];
  if (version === 'ff' || /^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 };
}

/** Formats ids as a version-00 `traceparent`. */
export function formatTraceparent(traceId: string, spanId: string, sampled: boolean): string {
  return `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;
}
