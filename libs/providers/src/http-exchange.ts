import type { Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import type { CallCancel } from './deadline';

/** Most we keep of a response body; a provider's `{ "id" }` answer is tiny. */
export const MAX_RESPONSE_BYTES = 256 * 1024;

export interface HttpCall {
  url: URL;
  method: 'GET' | 'POST';
  headers: Record<string, string> | string[];
  body?: string;
}

/** What one exchange ended with. Never throws: the caller classifies. */
export type HttpExchange =
  | { kind: 'response'; status: number; readonly headers: IncomingHttpHeaders; body: Buffer; truncated: boolean }
  | {
      kind: 'error';
      error: unknown;
      /** undici handed the request to a socket (see `classifyHttpError`). */
      requestStarted: boolean;
      /** Final status, when headers arrived before the failure. */
      status?: number;
      headers?: IncomingHttpHeaders;
    };

const latin1 = (v: Buffer | string): string => (typeof v === 'string' ? v : v.toString('latin1'));

/** undici's raw header list (name, value, name, value …) as Node's header object, as undici's own `parseHeaders` builds it. */
export function headersOf(raw: readonly (Buffer | string)[] | null | undefined): IncomingHttpHeaders {
  const out: Record<string, string | string[]> = {};
  if (!raw) return out;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const key = latin1(raw[i] as Buffer | string).toLowerCase();
    const value = latin1(raw[i + 1] as Buffer | string);
    const seen = Object.hasOwn(out, key) ? out[key] : undefined;
    if (seen === undefined) {
      // A header named `__proto__` must become a field, not the object's prototype.
      if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, configurable: true, writable: true });
      else out[key] = value;
    } else if (typeof seen === 'string') out[key] = [seen, value];
    else seen.push(value);
  }
  return out;
}

/** A response; its headers are parsed on first read (a 2xx send reads only the body). */
class Response {
  readonly kind = 'response' as const;
  private parsed: IncomingHttpHeaders | undefined;

  constructor(
    readonly status: number,
    private readonly raw: readonly Buffer[] | null,
    readonly body: Buffer,
    readonly truncated: boolean,
  ) {}

  get headers(): IncomingHttpHeaders {
    return (this.parsed ??= headersOf(this.raw));
  }
}

/**
 * undici's own handler interface (`onConnect` … `onComplete`), which its core
 * calls directly: the newer controller interface is adapted onto it by a
 * wrapper per request that also parses every header and trailer list. One
 * object (and its `cancel` callback) per exchange.
 */
class ExchangeHandler implements Dispatcher.DispatchHandler {
  private settled = false;
  private requestStarted = false;
  private abortRequest: ((err: Error) => void) | undefined;
  private status: number | undefined;
  private rawHeaders: Buffer[] | null = null;
  private chunks: Buffer[] = [];
  private size = 0;
  private truncated = false;

  constructor(private readonly resolve: (result: HttpExchange) => void) {}

  /** Our deadline passed or the caller aborted. */
  readonly cancel = (reason: Error): void => {
    this.failed(reason);
    // Tears the socket down: a request cut short must not complete behind our back.
    this.abortRequest?.(reason);
  };

  failed(error: unknown): void {
    this.finish({
      kind: 'error',
      error,
      requestStarted: this.requestStarted,
      ...(this.status === undefined ? {} : { status: this.status, headers: headersOf(this.rawHeaders) }),
    });
  }

  onConnect(abort: (err?: Error) => void): void {
    // Ended before undici got to the write (deadline, abort): refuse the start,
    // so a request reported as never sent can never leave afterwards (undici
    // checks `request.aborted` right after this returns, before writing).
    if (this.settled) {
      abort(new Error('call already ended before the request was written'));
      return;
    }
    this.abortRequest = abort;
    this.requestStarted = true;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    this.status = statusCode;
    this.rawHeaders = rawHeaders;
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.size >= MAX_RESPONSE_BYTES) {
      this.truncated = true;
      return true;
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
    return true;
  }

  onComplete(): void {
    const { chunks } = this;
    const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    this.finish(new Response(this.status ?? 0, this.rawHeaders, body, this.truncated));
  }

  onError(error: Error): void {
    this.failed(error);
  }

  private finish(result: HttpExchange): void {
    if (this.settled) return;
    this.settled = true;
    this.resolve(result);
  }
}

/**
 * One request through `dispatcher.dispatch` with our own handler, rather than
 * `request()`, for one reason: `onConnect` tells us whether undici put the
 * request on the wire, which decides "retryable" versus "in doubt".
 *
 * `cancel` is the call's deadline. Aborting before the start settles at once
 * and the handler refuses the start if undici gets to it later, so a request
 * we reported as never sent can never leave afterwards.
 */
export function exchange(dispatcher: Dispatcher, call: HttpCall, cancel: CallCancel, budgetMs: number): Promise<HttpExchange> {
  return new Promise((resolve) => {
    const handler = new ExchangeHandler(resolve);
    const reason = cancel.reason();
    if (reason) {
      handler.failed(reason);
      return;
    }
    cancel.onAbort(handler.cancel);
    try {
      dispatcher.dispatch(
        {
          origin: call.url.origin,
          path: `${call.url.pathname}${call.url.search}`,
          method: call.method,
          headers: call.headers,
          body: call.body ?? null,
          // Backstops behind our own deadline timer; undici's defaults are 300 s.
          headersTimeout: Math.max(1, budgetMs),
          bodyTimeout: Math.max(1, budgetMs),
        },
        handler,
      );
    } catch (error) {
      handler.failed(error);
    }
  });
}
