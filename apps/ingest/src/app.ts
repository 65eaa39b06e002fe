import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { Registry } from 'prom-client';
import { livenessHandler, metricsHandler, readinessHandler, type ReadinessCheck } from '@singleshot/observability';
import { TokenBuckets, inFlightLimit, sendError } from '@singleshot/http';
import type { IngestContext } from './context';
import { INGEST_OPENAPI } from './openapi';
import type { Producer } from './producer-auth';
import { eventsRouter } from './routes/events';
import { rawMailRouter } from './routes/mail-raw';
import { SIGNATURE_HEADER } from './signature';

export interface IngestAppOptions {
  ctx: IngestContext;
  registry: Registry;
  ready: ReadinessCheck;
  /** Provider-specific inbound formats, mounted at `/v1/mail/inbound` (`/:provider`). */
  providerWebhooks?: Router;
  /** Signed document links, mounted at `/v1/documents`. */
  documents?: Router;
}

/** The ingest HTTP API (docs/contract.md "Ingest HTTP API"). */
export function createIngestApp({ ctx, registry, ready, providerWebhooks, documents }: IngestAppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');

  app.use((req, res, next) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const route = req.route?.path ? `${req.baseUrl}${req.route.path === '/' ? '' : req.route.path}` : 'unmatched';
      const status = String(res.statusCode);
      ctx.metrics.ingestRequestDuration.observe({ route, status }, Number(process.hrtime.bigint() - started) / 1e9);
      if (req.originalUrl.startsWith('/v1/')) ctx.metrics.ingestRequests.inc({ key: (res.locals.producer as Producer | undefined)?.name ?? 'none', status });
    });
    next();
  });

  app.get('/healthz', (req, res) => void livenessHandler()(req, res));
  app.get('/readyz', (req, res) => void readinessHandler(ready, { logger: ctx.logger })(req, res));
  app.get('/metrics', (req, res) => void metricsHandler(registry)(req, res));
  app.get('/openapi.json', (_req, res) => void res.json(INGEST_OPENAPI));

  // Shed load before any body is read: memory stays bounded however many arrive.
  app.use('/v1', inFlightLimit(ctx.limits.maxRequestsInFlight, 1));

  // Raw bodies everywhere: signatures are computed over the exact bytes.
  const parseRaw = express.raw({ type: () => true, limit: ctx.maxBodyBytes });
  // A request without body framing (no Content-Length, no chunked encoding)
  // leaves req.body undefined in express 5; it is an empty body, and must get a
  // 4xx like one instead of a 500 from hashing `undefined`.
  const emptyIfNone = (req: Request, _res: Response, next: NextFunction) => {
    if (!Buffer.isBuffer(req.body)) req.body = Buffer.alloc(0);
    next();
  };
  const buckets = new TokenBuckets();
  const authenticated = (req: Request, res: Response, next: NextFunction) => {
    const outcome = ctx.auth.authenticate(req.get('authorization'), req.get(SIGNATURE_HEADER), req.body as Buffer);
    if (!outcome.ok) {
      ctx.metrics.eventsReceived.inc({ source: 'unknown', result: 'invalid' });
      res.setHeader('www-authenticate', 'Bearer realm="singleshot"');
      return sendError(res, 401, outcome.code, outcome.message);
    }
    res.locals.producer = outcome.producer;
    const wait = buckets.take(outcome.producer.name, outcome.producer.rate);
    if (wait > 0) {
      res.setHeader('retry-after', String(wait));
      return sendError(res, 429, 'RATE_LIMITED', `producer "${outcome.producer.name}" is over its rate limit; retry later`, { retryAfterSeconds: wait });
    }
    next();
  };
  const guarded = [parseRaw, emptyIfNone, authenticated];
  app.use('/v1/events', guarded, eventsRouter(ctx));
  // Provider formats keep their providers' own authentication (signatures, basic auth, URL tokens).
  if (providerWebhooks) app.use('/v1/mail/inbound', providerWebhooks);
  if (documents) app.use('/v1/documents', documents);
  app.use('/v1/mail/inbound', guarded, rawMailRouter(ctx));

  app.use((req, res) => sendError(res, 404, 'NOT_FOUND', `no route for ${req.method} ${req.path}`));
  // express 5 forwards rejected async handlers here.
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const e = err as { type?: string; status?: number; expose?: boolean; message?: string };
    if (e.type === 'entity.too.large') {
      return sendError(res, 413, 'BODY_TOO_LARGE', `the body exceeds ${ctx.maxBodyBytes} bytes`);
    }
    if (typeof e.status === 'number' && e.status >= 400 && e.status < 500 && e.expose) {
      return sendError(res, e.status, 'BAD_REQUEST', e.message ?? 'bad request');
    }
    ctx.logger.error({ err }, 'ingest request failed');
    if (res.headersSent) return void res.destroy();
    // Never a 2xx for something not kept; 500 tells the producer to retry.
    sendError(res, 500, 'INTERNAL', 'internal error; the event was not confirmed, retry');
  });
  return app;
}
