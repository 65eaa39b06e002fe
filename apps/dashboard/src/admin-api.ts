import express, { Router } from 'express';
import type { AdminApiDeps } from './deps';
import { sendError } from '@singleshot/http';
import { apiErrorHandler } from './errors';
import { digestRoutes } from './routes/digests';
import { dlqRoutes } from './routes/dlq';
import { journalRoutes } from './routes/journal';
import { lookupRoutes } from './routes/lookups';
import { sourceRoutes } from './routes/sources';
import { waitingRoutes } from './routes/waiting';
import { schedulingRoutes } from './routes/scheduling';
import { suppressionRoutes } from './routes/suppressions';

/**
 * The admin JSON API, mounted under `/admin/api` behind authentication:
 * `GET operations/:key`, `GET messages/:key`, `GET dlq`, `POST dlq/:key/replay`,
 * `GET journal?from=&to=&limit=`, `GET sources`, `GET scheduled`, `GET digests?limit=`,
 * `POST cancellations`, `GET|POST|DELETE suppressions`, `GET suppressions/audit`,
 * `GET suppressions/:recipient`. Errors are `{ error: { code, message, details } }`.
 */
export function adminApiRouter(deps: AdminApiDeps): Router {
  const router = Router();
  router.use(express.json({ limit: '64kb' }));
  router.use(lookupRoutes(deps));
  router.use(dlqRoutes(deps));
  router.use(journalRoutes(deps));
  router.use(waitingRoutes(deps));
  router.use(schedulingRoutes(deps));
  router.use(digestRoutes(deps));
  router.use(suppressionRoutes(deps));
  router.use(sourceRoutes(deps));
  router.use((req, res) => sendError(res, 404, 'NOT_FOUND', `no admin API route for ${req.method} ${req.path}`));
  router.use(apiErrorHandler(deps.logger));
  return router;
}
