import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { readBody, sendError } from '@singleshot/http';
import type { IngestContext } from './context';
import type { IntakeGate } from './intake-gate';
import type { Producer } from './producer-auth';
import { answerInternal, answerTooLarge } from './routes/answer';
import { postEvent } from './routes/events';
import { SIGNATURE_HEADER } from './signature';

/** The route label of `POST /v1/events` in `singleshot_ingest_request_duration_seconds`. */
const ROUTE = '/v1/events';

/**
 * True for the producers' hot path, `POST /v1/events` (a query string
 * allowed), with a body that needs no inflating. Anything else (another path
 * or spelling, `/v1/events/`, a compressed body) is the Express app's.
 */
export function isFastEvent(req: IncomingMessage): boolean {
  if (req.method !== 'POST') return false;
  const url = req.url ?? '';
  if (url !== ROUTE && !(url.startsWith(ROUTE) && url.charCodeAt(ROUTE.length) === 0x3f /* ? */)) return false;
  const encoding = req.headers['content-encoding'];
  return !encoding || encoding.toLowerCase() === 'identity';
}

/** Per request: what the metrics of its 'finish' need. */
class Exchange {
  readonly started = process.hrtime.bigint();
  producer: Producer | undefined;
  /** Past authentication and the rate limit: the route took it (Express's `req.route`). */
  routed = false;
}

/**
 * The HTTP server's request listener: `POST /v1/events` is served here on
 * node:http without Express's router, body parser and response machinery
 * (where much of ingest's busy time went); every other request
 * goes to `app` unchanged. Same steps, limits and answers as the Express
 * route: the in-flight cap and rate buckets are the app's own (one `gate`),
 * the body limit and its 413, authentication and its 401, the 429, then the
 * one `postEvent`. The metrics are the same series with the same labels
 * (route `unmatched` for answers given before the route, as Express labels
 * them; a 500 is `/v1/events`, where Express's label was an empty route, its
 * base URL already restored by then). On the wire a 202 carries no ETag.
 */
export function withFastEvents(ctx: IngestContext, gate: IntakeGate, app: RequestListener): RequestListener {
  const { counters } = ctx;
  // One 'finish' listener for every fast request; the exchange rides on the response.
  const finished = function (this: ServerResponse & { [EXCHANGE]?: Exchange }): void {
    const x = this[EXCHANGE];
    if (!x) return;
    counters.request(x.routed ? ROUTE : 'unmatched', this.statusCode, Number(process.hrtime.bigint() - x.started) / 1e9, x.producer?.name ?? 'none');
  };
  return (req, res) => {
    if (!isFastEvent(req)) return app(req, res);
    const exchange = new Exchange();
    (res as ServerResponse & { [EXCHANGE]?: Exchange })[EXCHANGE] = exchange;
    res.once('finish', finished);
    // Shed load before any body is read.
    if (!gate.inFlight.enter(res)) return;
    readBody(req, ctx.maxBodyBytes, (error, body) => {
      // What Express's router catches (a throw here would reach the 'request' emitter and end the process).
      try {
        if (error) {
          if (error.status === 413) return answerTooLarge(ctx, res);
          return sendError(res, error.status, 'BAD_REQUEST', error.message);
        }
        const { headers } = req;
        const producer = gate.authenticate(res, headers.authorization, headerOf(headers[SIGNATURE_HEADER]), body);
        if (!producer) return;
        exchange.producer = producer;
        if (!gate.withinRate(res, producer)) return;
        exchange.routed = true;
        postEvent(ctx, res, producer, body, headerOf(headers['idempotency-key'])).catch((err: unknown) => failed(ctx, res, err));
      } catch (err) {
        failed(ctx, res, err);
      }
    });
  };
}

/** A 500 (logged), and should even that throw, the connection closed: never an unhandled error. */
function failed(ctx: IngestContext, res: ServerResponse, err: unknown): void {
  try {
    answerInternal(ctx, res, err);
  } catch {
    res.destroy();
  }
}

const EXCHANGE = Symbol('fastEventExchange');

/** A header as Express's `req.get` reads it (node joins repeated custom headers into one string). */
function headerOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}
