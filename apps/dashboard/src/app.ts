import express, { type NextFunction, type Request, type Response } from 'express';
import type { Registry } from 'prom-client';
import type { Queues } from '@singleshot/queues';
import { livenessHandler, metricsHandler, readinessHandler, type ReadinessCheck } from '@singleshot/observability';
import { ADMIN_API_PATH, adminApiRouter } from './admin-api';
import { adminOpenApi } from './admin-openapi';
import { loginHandler, requireAuth, type DashboardCredentials } from './auth';
import { BOARD_PATH, boardRouter } from './board';
import { boardGuard } from './board-guard';
import type { AdminApiDeps } from './deps';
import { sendError } from '@singleshot/http';
import { originGuard } from './origin-guard';
import { operatorOnly } from './tenancy';
import type { TenantKeys } from './tenant-keys';
import { digestPageRoutes } from './routes/digests';
import { tenantPageRoutes } from './routes/tenants';
import { storyRoutes } from './routes/story';

export interface DashboardAppOptions {
  api: AdminApiDeps;
  /** The queues Bull Board shows (every one, the DLQ included). */
  queues: Pick<Queues, 'decideAll' | 'deliverAll' | 'deliverOf' | 'dead'> & Partial<Pick<Queues, 'render' | 'digest'>>;
  /** Undefined only for `dashboard.allowAnonymous` on loopback. */
  credentials: DashboardCredentials | undefined;
  /** Producer keys bound to a tenant, taken by the admin API and the story pages for their tenant's data only. */
  tenantKeys?: TenantKeys;
  /** Other origins allowed to send state-changing requests (a reverse proxy's public URL). */
  allowedOrigins?: readonly string[];
  registry: Registry;
  ready: ReadinessCheck;
}

/**
 * The dashboard: Bull Board at `/admin/queues`, the admin JSON API at
 * `/admin/api`, the story pages at `/admin/story` and the open digests at
 * `/admin/digests`, all behind authentication; `/healthz`, `/readyz` and
 * `/metrics` open, for probes and Prometheus.
 */
export function createDashboardApp(options: DashboardAppOptions): express.Express {
  const { api, credentials } = options;
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);

  app.get('/healthz', (req, res) => void livenessHandler()(req, res));
  app.get('/readyz', (req, res) => void readinessHandler(options.ready, { logger: api.logger })(req, res));
  app.get('/metrics', (req, res) => void metricsHandler(options.registry)(req, res));
  const document = adminOpenApi();
  app.get('/openapi.json', (_req, res) => void res.json(document));
  app.get('/', (_req, res) => res.redirect(302, BOARD_PATH));

  const auth = requireAuth(credentials, api.logger, options.tenantKeys);
  // Cross-site forgery is refused before anything else: a page elsewhere must not
  // be able to spend the operator's saved credentials.
  const sameOrigin = originGuard(options.allowedOrigins);
  app.get('/admin/login', loginHandler(credentials));
  app.use(ADMIN_API_PATH, sameOrigin, auth, adminApiRouter(api));
  // The story of one notification, as a page (the admin API has it as JSON).
  app.use('/admin/story', sameOrigin, auth, storyRoutes(api));
  // The open digests, as a page (the admin API has them as JSON).
  app.use('/admin/digests', sameOrigin, auth, operatorOnly, digestPageRoutes(api));
  // The tenants, their share and backlog, as a page: every tenant's, so an operator's.
  app.use('/admin/tenants', sameOrigin, auth, operatorOnly, tenantPageRoutes(api));
  app.use(
    BOARD_PATH,
    sameOrigin,
    auth,
    operatorOnly,
    boardGuard({ queues: options.queues, replay: api.replay, logger: api.logger }),
    boardRouter(options.queues),
  );

  app.use((req, res) => sendError(res, 404, 'NOT_FOUND', `no route for ${req.method} ${req.path}`));
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    api.logger.error({ event: 'request_failed', err, method: req.method, path: req.path }, 'dashboard request failed');
    if (res.headersSent) return void res.destroy();
    sendError(res, 500, 'INTERNAL', 'internal error');
  });
  return app;
}
