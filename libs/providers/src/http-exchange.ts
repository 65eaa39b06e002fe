import type { Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';

/** Most we keep of a response body; a provider's `{ "id" }` answer is tiny. */
export const MAX_RESPONSE_BYTES = 256 * 1024;

export interface HttpCall {
  url: URL;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

/** What one exchange ended with. Never throws: the caller classifies. */
export type HttpExchange =
  | { kind: 'response'; status: number; headers: IncomingHttpHeaders; body: Buffer; truncated: boolean }
  | {
      kind: 'error';
      error: unknown;
      /** undici handed the request to a socket (see `classifyHttpError`). */
      requestStarted: boolean;
      /** Final status, when headers arrived before the failure. */
      status?: number;
      headers?: IncomingHttpHeaders;
    };

/**
 * One request through `dispatcher.dispatch` with our own handler, rather than
 * `request()`, for one reason: `onRequestStart` tells us whether undici put the
 * request on the wire, which decides "retryable" versus "in doubt".
 *
 * `signal` is the call's deadline. Aborting before the start settles at once
 * and the handler refuses the start if undici gets to it later, so a request
 * we reported as never sent can never leave afterwards (undici checks
 * `request.aborted` between `onRequestStart` and the write).
 */
export function exchange(dispatcher: Dispatcher, call: HttpCall, signal: AbortSignal, budgetMs: number): Promise<HttpExchange> {
  return new Promise((resolve) => {
    let settled = false;
    let requestStarted = false;
    let controller: Dispatcher.DispatchController | undefined;
    let status: number | undefined;
    let headers: IncomingHttpHeaders | undefined;
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;

    const finish = (result: HttpExchange) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const failed = (error: unknown) =>
      finish({ kind: 'error', error, requestStarted, ...(status === undefined ? {} : { status, headers }) });
    function onAbort() {
      const reason = signal.reason instanceof Error ? signal.reason : new Error('aborted');
      failed(reason);
      // Tears the socket down: a request cut short must not complete behind our back.
      if (controller && !controller.aborted) controller.abort(reason);
    }

    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(ctl) {
        if (settled) {
          ctl.abort(new Error('call already ended before the request was written'));
          return;
        }
        controller = ctl;
        requestStarted = true;
      },
      onResponseStart(_ctl, statusCode, responseHeaders) {
        status = statusCode;
        headers = responseHeaders;
      },
      onResponseData(_ctl, chunk) {
        if (size >= MAX_RESPONSE_BYTES) {
          truncated = true;
          return;
        }
        chunks.push(chunk);
        size += chunk.length;
      },
      onResponseEnd() {
        finish({
          kind: 'response',
          status: status ?? 0,
          headers: headers ?? {},
          body: Buffer.concat(chunks),
          truncated,
        });
      },
      onResponseError(_ctl, error) {
        failed(error);
      },
    };

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
      failed(error);
    }
  });
}
