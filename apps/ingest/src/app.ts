import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { Registry } from 'prom-client';
import { livenessHandler, metricsHandler, readinessHandler, type ReadinessCheck } from '@singleshot/observability';
import { inFlightLimit, sendError } from '@singleshot/http';
import type { IngestContext } from './context';
import { IntakeGate } from './intake-gate';
import { INGEST_OPENAPI } from './openapi';
import type { Producer } from './producer-auth';
import { answerInternal, answerTooLarge } from './routes/answer';
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
  /** In-flight cap, authentication and rate buckets; shared with the fast path (handler.ts). Default: a gate of its own. */
  gate?: IntakeGate;
}

/** The ingest HTTP API (docs/contract.md "Ingest HTTP API"). */
export function createIngestApp({ ctx, registry, ready, providerWebhooks, documents, gate = new IntakeGate(ctx) }: IngestAppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');

  app.use((req, res, next) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const route = req.route?.path ? `${req.baseUrl}${req.route.path === '/' ? '' : req.route.path}` : 'unmatched';
      const key = req.originalUrl.startsWith('/v1/') ? ((res.locals.producer as Producer | undefined)?.name ?? 'none') : undefined;
      ctx.counters.request(route, res.statusCode, Number(process.hrtime.bigint() - started) / 1e9, key);
    });
    next();
  });

  app.get('/healthz', (req, res) => void livenessHandler()(req, res));
  app.get('/readyz', (req, res) => void readinessHandler(ready, { logger: ctx.logger })(req, res));
  app.get('/metrics', (req, res) => void metricsHandler(registry)(req, res));
  app.get('/openapi.json', (_req, res) => void res.json(INGEST_OPENAPI));

  // Shed load before any body is read: memory stays bounded however many arrive.
  app.use('/v1', inFlightLimit(gate.inFlight));

  // Raw bodies everywhere: signatures are computed over the exact bytes.
  const parseRaw = express.raw({ type: () => true, limit: ctx.maxBodyBytes });
  // A request without body framing (no Content-Length, no chunked encoding)
  // leaves req.body undefined in express 5; it is an empty body, and must get a
  // 4xx like one instead of a 500 from hashing `undefined`.
  const emptyIfNone = (req: Request, _res: Response, next: NextFunction) => {
    if (!Buffer.isBuffer(req.body)) req.body = Buffer.alloc(0);
    next();
  };
  const authenticated = (req: Request, res: Response, next: NextFunction) => {
    const producer = gate.authenticate(res, req.get('authorization'), req.get(SIGNATURE_HEADER), req.body as Buffer);
    if (!producer) return;
    // Before the rate check: a 429 is counted under the key's name.
    res.locals.producer = producer;
    if (gate.withinRate(res, producer)) next();
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
    if (e.type === 'entity.too.large') return answerTooLarge(ctx, res);
    if (typeof e.status === 'number' && e.status >= 400 && e.status < 500 && e.expose) {
      return sendError(res, e.status, 'BAD_REQUEST', e.message ?? 'bad request');
    }
    answerInternal(ctx, res, err);
  });
  return app;
}
