import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { Registry } from 'prom-client';
import { livenessHandler, metricsHandler, readinessHandler, type ReadinessCheck } from '@singleshot/observability';
import type { IngestContext } from './context';
import { sendError } from './errors';
import { INGEST_OPENAPI } from './openapi';
import { eventsRouter } from './routes/events';
import { rawMailRouter } from './routes/mail-raw';
import { SIGNATURE_HEADER, verifySignature } from './signature';

export interface IngestAppOptions {
  ctx: IngestContext;
  registry: Registry;
  ready: ReadinessCheck;
  /** Provider-specific inbound formats, mounted at `/v1/mail/inbound` (`/:provider`). */
  providerWebhooks?: Router;
}

/** The ingest HTTP API (docs/contract.md "Ingest HTTP API"). */
export function createIngestApp({ ctx, registry, ready, providerWebhooks }: IngestAppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');

  app.use((req, res, next) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const route = req.route?.path ? `${req.baseUrl}${req.route.path === '/' ? '' : req.route.path}` : 'unmatched';
      ctx.metrics.ingestRequestDuration.observe(
        { route, status: String(res.statusCode) },
        Number(process.hrtime.bigint() - started) / 1e9,
      );
    });
    next();
  });

  app.get('/healthz', (req, res) => void livenessHandler()(req, res));
  app.get('/readyz', (req, res) => void readinessHandler(ready, { logger: ctx.logger })(req, res));
  app.get('/metrics', (req, res) => void metricsHandler(registry)(req, res));
  app.get('/openapi.json', (_req, res) => void res.json(INGEST_OPENAPI));

  // Raw bodies everywhere: signatures are computed over the exact bytes.
  const parseRaw = express.raw({ type: () => true, limit: ctx.maxBodyBytes });
  // A request without body framing (no Content-Length, no chunked encoding)
  // leaves req.body undefined in express 5; it is an empty body, and must get a
  // 4xx like one instead of a 500 from hashing `undefined`.
  const emptyIfNone = (req: Request, _res: Response, next: NextFunction) => {
    if (!Buffer.isBuffer(req.body)) req.body = Buffer.alloc(0);
    next();
  };
  const raw = [parseRaw, emptyIfNone];
  const signed = (req: Request, res: Response, next: NextFunction) => {
    if (verifySignature(req.body as Buffer, req.get(SIGNATURE_HEADER), ctx.signingSecrets)) return next();
    ctx.metrics.eventsReceived.inc({ source: 'unknown', result: 'invalid' });
    sendError(res, 401, 'BAD_SIGNATURE', `missing or invalid ${SIGNATURE_HEADER} header`);
  };
  app.use('/v1/events', raw, signed, eventsRouter(ctx));
  if (providerWebhooks) app.use('/v1/mail/inbound', providerWebhooks);
  app.use('/v1/mail/inbound', raw, signed, rawMailRouter(ctx));

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
    // Never a 2xx for something not kept; 500 tells the producer to retry.
    sendError(res, 500, 'INTERNAL', 'internal error; the event was not confirmed, retry');
  });
  return app;
}
