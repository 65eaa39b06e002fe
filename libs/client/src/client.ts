import { createHmac } from 'node:crypto';
import { parseRetryAfter, retryDelayMs, type BackoffOptions } from './backoff';
import { InvalidEventError, SendAbortedError, SendDeadlineError, SendRejectedError } from './errors';

/** A business event, as `POST /v1/events` takes it (see docs/ingest-api.md). */
export interface SingleshotEvent {
  /** The producer's stable event id: the same for every retry and every re-send of this event. */
  id: string;
  source: string;
  type: string;
  recipients?: string[];
  data?: Record<string, unknown>;
}

export interface SendResult {
  messageKey: string;
  /** `duplicate`: ingest already had this event id (a retry after a lost answer lands here). */
  status: 'accepted' | 'duplicate';
  /** Requests it took. */
  attempts: number;
}

/** Passed to `onRetry` before each wait. */
export interface RetryInfo {
  /** The attempt that just failed (1-based). */
  attempt: number;
  /** `HTTP_503`, `HTTP_429`, `ECONNREFUSED`, `ATTEMPT_TIMEOUT`, … */
  code: string;
  status?: number;
  /** How long the client waits before the next attempt. */
  delayMs: number;
}

export interface ClientOptions {
  /** Ingest base URL, e.g. `https://notify.example.com`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>` (config `ingest.apiKeys`). */
  apiKey?: string;
  /** Signs the raw body: `X-Singleshot-Signature: sha256=<hex HMAC-SHA256>` (config `ingest.signingSecrets`). */
  signingSecret?: string;
  /** Total time one `send` may take, retries included. Default 30 000 ms. */
  deadlineMs?: number;
  /** Bound of one request. Default 10 000 ms (never past the deadline). */
  attemptTimeoutMs?: number;
  backoff?: BackoffOptions;
  /** Called before each wait between attempts (logging, metrics). */
  onRetry?: (info: RetryInfo) => void;
  /** Extra headers on every request (tracing). Cannot replace the auth or content headers. */
  headers?: Record<string, string>;
}

export interface SendOptions {
  signal?: AbortSignal;
  /** Overrides the client's `deadlineMs` for this send. */
  deadlineMs?: number;
}

/** Statuses that say "not kept, try again": the event id makes a retry safe even if it was kept. */
const RETRYABLE_STATUS = new Set([408, 429, 500, 502, 503, 504]);

/** System error codes of a request that could not reach ingest (fetch wraps them in `cause`). */
function networkCode(err: unknown): string {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return 'NETWORK_ERROR';
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }
    function onAbort() {
      clearTimeout(timer);
      reject(new SendAbortedError(signal?.reason));
    }
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/**
 * The producer side of at-least-once: `send` posts an event and retries on
 * network errors, 503, 429 (and 408/500/502/504) with the same body, so the
 * same event id, until ingest answers 202 or the deadline passes. Waits use
 * jittered exponential backoff and never come back before `Retry-After`.
 * Ingest deduplicates on the id: a retry after a lost 202 answers
 * `duplicate`, never a second notification.
 */
export class SingleshotClient {
  private readonly url: URL;

  constructor(private readonly options: ClientOptions) {
    this.url = new URL('/v1/events', options.baseUrl);
  }

  async send(event: SingleshotEvent, opts: SendOptions = {}): Promise<SendResult> {
    if (typeof event?.id !== 'string' || event.id.trim() === '') throw new InvalidEventError('the event needs a stable, non-empty "id"');
    if (typeof event.source !== 'string' || typeof event.type !== 'string') throw new InvalidEventError('the event needs "source" and "type"');
    // Serialized once: every attempt sends the same bytes, so the same id and the same signature.
    const body = JSON.stringify(event);
    const headers: Record<string, string> = { ...this.options.headers, 'content-type': 'application/json', accept: 'application/json' };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    if (this.options.signingSecret) headers['x-singleshot-signature'] = `sha256=${createHmac('sha256', this.options.signingSecret).update(body).digest('hex')}`;

    const deadline = Date.now() + (opts.deadlineMs ?? this.options.deadlineMs ?? 30_000);
    const perAttempt = this.options.attemptTimeoutMs ?? 10_000;
    // The last failure, so a deadline that passes while sleeping (a timer fires
    // late on a busy machine) still reports its cause.
    let last: { code: string; cause?: unknown } | undefined;
    for (let attempt = 1; ; attempt++) {
      if (opts.signal?.aborted) throw new SendAbortedError(opts.signal.reason);
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        if (!last) throw new SendDeadlineError('deadline passed before the first attempt', 0, 'DEADLINE');
        throw new SendDeadlineError(`ingest did not take the event before the deadline (${attempt - 1} attempts, last ${last.code})`, attempt - 1, last.code, last.cause);
      }
      const timeout = AbortSignal.timeout(Math.min(perAttempt, remaining));
      const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
      let failure: { code: string; status?: number; retryAfterMs?: number; cause?: unknown };
      try {
        const res = await fetch(this.url, { method: 'POST', headers, body, signal });
        const text = await res.text();
        if (res.status === 202) {
          const answer = JSON.parse(text) as { messageKey: string; status: 'accepted' | 'duplicate' };
          return { messageKey: answer.messageKey, status: answer.status, attempts: attempt };
        }
        const error = parseError(text);
        if (!RETRYABLE_STATUS.has(res.status)) {
          throw new SendRejectedError(
            `ingest refused the event: HTTP ${res.status}${error?.message ? ` (${error.message})` : ''}`,
            error?.code ?? `HTTP_${res.status}`,
            res.status,
            error?.details,
          );
        }
        failure = { code: `HTTP_${res.status}`, status: res.status, retryAfterMs: parseRetryAfter(res.headers.get('retry-after')) };
      } catch (err) {
        if (err instanceof SendRejectedError) throw err;
        if (opts.signal?.aborted) throw new SendAbortedError(opts.signal.reason);
        // An attempt cut short by the overall deadline (its timeout was the time
        // left, not attemptTimeoutMs) did not fail on its own: the deadline
        // reports the last real failure when there was one.
        if (timeout.aborted && remaining < perAttempt && last) {
          throw new SendDeadlineError(`ingest did not take the event before the deadline (${attempt} attempts, last ${last.code})`, attempt, last.code, last.cause);
        }
        failure = { code: timeout.aborted ? 'ATTEMPT_TIMEOUT' : networkCode(err), cause: err };
      }
      last = failure;
      const delayMs = retryDelayMs(attempt, this.options.backoff ?? {}, failure.retryAfterMs);
      if (Date.now() + delayMs >= deadline) {
        throw new SendDeadlineError(`ingest did not take the event before the deadline (${attempt} attempts, last ${failure.code})`, attempt, failure.code, failure.cause);
      }
      this.options.onRetry?.({ attempt, code: failure.code, ...(failure.status ? { status: failure.status } : {}), delayMs });
      await sleep(delayMs, opts.signal);
    }
  }
}

function parseError(text: string): { code?: string; message?: string; details?: unknown } | undefined {
  try {
    const parsed = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; details?: unknown } };
    const e = parsed?.error;
    if (!e || typeof e !== 'object') return undefined;
    return {
      ...(typeof e.code === 'string' ? { code: e.code } : {}),
      ...(typeof e.message === 'string' ? { message: e.message } : {}),
      details: e.details,
    };
  } catch {
    return undefined;
  }
}

/** Shorthand for `new SingleshotClient(options)`. */
export function createClient(options: ClientOptions): SingleshotClient {
  return new SingleshotClient(options);
}
