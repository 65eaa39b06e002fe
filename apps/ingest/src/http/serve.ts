import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { parse as parseQuery, type ParsedUrlQuery } from 'node:querystring';
import { readEncodedBody, sendError, type BodyReadError } from '@singleshot/http';
import type { IngestContext } from '../context';
import type { IntakeGate } from '../intake-gate';
import type { Producer } from '../producer-auth';
import { answerInternal, answerTooLarge } from '../routes/answer';
import { SIGNATURE_HEADER } from '../signature';
import { parseJsonBody } from './json-body';
import type { IngestRoute, RouteRequest } from './route';
import { RouteMatcher } from './route-match';

/** What the server needs of the ingest context. */
export type ServeContext = Pick<IngestContext, 'counters' | 'logger' | 'maxBodyBytes'>;

/** Per request: what the metrics of its 'finish' need. */
class Exchange {
  readonly started = process.hrtime.bigint();
  /** The matched route's path once past its gate; until then the answer is `unmatched`. */
  label = 'unmatched';
  /** Intake API requests (`/v1/…`) are also counted by producer key. */
  keyed = false;
  producer: Producer | undefined;
}

const EXCHANGE = Symbol('ingestExchange');
type Res = ServerResponse & { [EXCHANGE]?: Exchange };

const EMPTY = Buffer.alloc(0);
const NO_QUERY: ParsedUrlQuery = Object.freeze(Object.create(null) as ParsedUrlQuery);
const UNDER_V1 = /^\/v1(?:\/|$)/i;
const KEYED = /^\/v1\//i;

/**
 * The one HTTP layer of ingest: every endpoint of `routes` on node:http,
 * matched by `RouteMatcher`, with each route's gate (the in-flight cap, the
 * body, producer authentication, the rate limit; see `IngestRoute.gate`),
 * its JSON schema, then its handler. Requests under `/v1` count against the
 * in-flight cap, matched or not. `singleshot_ingest_request_duration_seconds`
 * takes its `route` label from the matched definition here, in one place;
 * anything else is a 404 `NOT_FOUND`, a rejected handler a 500.
 */
export function serveRoutes(routes: readonly IngestRoute[], ctx: ServeContext, gate: IntakeGate): RequestListener {
  const matcher = new RouteMatcher(routes);
  const { counters } = ctx;
  // One 'finish' listener for every request; the exchange rides on the response.
  const finished = function (this: Res): void {
    const x = this[EXCHANGE];
    if (!x) return;
    counters.request(x.label, this.statusCode, Number(process.hrtime.bigint() - x.started) / 1e9, x.keyed ? (x.producer?.name ?? 'none') : undefined);
  };

  const run = (route: IngestRoute, req: IncomingMessage, res: ServerResponse, x: Exchange, params: Record<string, string>, query: ParsedUrlQuery, body: Buffer): void => {
    let value: unknown = body;
    if (route.json) {
      const outcome = parseJsonBody(body, route.json);
      if (!outcome.ok) {
        route.json.onRejected?.();
        return sendError(res, 400, outcome.code, outcome.message, outcome.details);
      }
      value = outcome.value;
    }
    const pending = route.handle(new HandlerRequest(req, params, query, value, x.producer), res);
    if (pending) pending.catch((err: unknown) => failed(ctx, res, err));
  };

  const dispatch = (req: IncomingMessage, res: ServerResponse, x: Exchange): void => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathname = url.charCodeAt(0) === 0x2f /* / */ ? (q < 0 ? url : url.slice(0, q)) : absolutePath(url);
    x.keyed = KEYED.test(pathname);
    const match = matcher.match(req.method, pathname);
    const route = match && 'route' in match ? match.route : undefined;
    // Shed load before any body is read: memory stays bounded however many arrive.
    if ((route ? route.gate !== 'open' : UNDER_V1.test(pathname)) && !gate.inFlight.enter(res)) return;
    if (!match) return sendError(res, 404, 'NOT_FOUND', `no route for ${req.method} ${pathname}`);
    if (!route) return sendError(res, 400, 'BAD_REQUEST', `Failed to decode param '${(match as { badParam: string }).badParam}'`);
    const { params } = match as { params: Record<string, string> };
    const query = q < 0 ? NO_QUERY : parseQuery(url.slice(q + 1));
    if (route.gate === 'producer') {
      return readEncodedBody(req, route.bodyLimit ?? ctx.maxBodyBytes, (error, body) => {
        // A throw here would reach the 'request' emitter and end the process.
        try {
          if (error) return refusedBody(ctx, res, error);
          const { headers } = req;
          const producer = gate.authenticate(res, headers.authorization, headerOf(headers[SIGNATURE_HEADER]), body);
          if (!producer) return;
          // Before the rate check: a 429 is counted under the key's name.
          x.producer = producer;
          if (!gate.withinRate(res, producer)) return;
          x.label = route.path;
          run(route, req, res, x, params, query, body);
        } catch (err) {
          failed(ctx, res, err);
        }
      });
    }
    x.label = route.path;
    if (route.bodyLimit === undefined) return run(route, req, res, x, params, query, EMPTY);
    readEncodedBody(req, route.bodyLimit, (error, body) => {
      try {
        if (!error) return run(route, req, res, x, params, query, body);
        if (route.bodyRefused) return route.bodyRefused(res, error, params);
        refusedBody(ctx, res, error);
      } catch (err) {
        failed(ctx, res, err);
      }
    });
  };

  return (req, res) => {
    const x = new Exchange();
    (res as Res)[EXCHANGE] = x;
    res.once('finish', finished);
    try {
      dispatch(req, res, x);
    } catch (err) {
      failed(ctx, res, err);
    }
  };
}

/** A handler's view of its request; a class, so a request costs no closure. */
class HandlerRequest implements RouteRequest<unknown> {
  constructor(
    readonly req: IncomingMessage,
    readonly params: Readonly<Record<string, string>>,
    readonly query: ParsedUrlQuery,
    readonly body: unknown,
    readonly producer: Producer | undefined,
  ) {}

  header(name: string): string | undefined {
    return headerOf(this.req.headers[name]);
  }
}

/** A body over the limit is 413 `BODY_TOO_LARGE`; one broken off or not inflatable, its 4xx `BAD_REQUEST`. */
function refusedBody(ctx: ServeContext, res: ServerResponse, error: BodyReadError): void {
  if (error.status === 413) return answerTooLarge(ctx, res);
  sendError(res, error.status, 'BAD_REQUEST', error.message);
}

/** A 500 (logged), and should even that throw, the connection closed: never an unhandled error. */
function failed(ctx: ServeContext, res: ServerResponse, err: unknown): void {
  try {
    answerInternal(ctx, res, err);
  } catch {
    res.destroy();
  }
}

/** The path of an absolute-form request target (`POST http://host/v1/events`), as Express routes it. */
function absolutePath(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
}

/** A header as one string: node joins repeated custom headers already, an array only for set-cookie. */
function headerOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}
