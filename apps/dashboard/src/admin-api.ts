import express, { Router } from 'express';
import { sendError } from '@singleshot/http';
import type { AdminRoute } from './admin-route';
import { mountAdminRoute } from './admin-express';
import type { AdminApiDeps } from './deps';
import { apiErrorHandler } from './errors';
import { DIGEST_ROUTES } from './routes/digests';
import { DLQ_ROUTES } from './routes/dlq';
import { JOURNAL_ROUTES } from './routes/journal';
import { LOOKUP_ROUTES } from './routes/lookups';
import { SCHEDULING_ROUTES } from './routes/scheduling';
import { SOURCE_ROUTES } from './routes/sources';
import { SUPPRESSION_ROUTES } from './routes/suppressions';
import { TENANT_ROUTES } from './routes/tenants';
import { WAITING_ROUTES } from './routes/waiting';

/** Where the admin API is mounted; its routes' paths are relative to it. */
export const ADMIN_API_PATH = '/admin/api';

/**
 * Every admin API endpoint, one declaration each, in match order (a literal
 * path before a parameter at the same place: `/suppressions/audit` before
 * `/suppressions/:recipient`). The router mounts this table and the OpenAPI
 * document at `/openapi.json` is generated from it (admin-openapi.ts).
 */
export const ADMIN_ROUTES: readonly AdminRoute[] = [
  ...LOOKUP_ROUTES,
  ...DLQ_ROUTES,
  ...JOURNAL_ROUTES,
  ...WAITING_ROUTES,
  ...SCHEDULING_ROUTES,
  ...DIGEST_ROUTES,
  ...SUPPRESSION_ROUTES,
  ...SOURCE_ROUTES,
  ...TENANT_ROUTES,
];

/**
 * The admin JSON API, mounted at `ADMIN_API_PATH` behind authentication:
 * the routes of `ADMIN_ROUTES`. Errors are `{ error: { code, message,
 * details } }`.
 */
export function adminApiRouter(deps: AdminApiDeps): Router {
  const router = Router();
  router.use(express.json({ limit: '64kb' }));
  for (const route of ADMIN_ROUTES) mountAdminRoute(router, route, deps);
  router.use((req, res) => sendError(res, 404, 'NOT_FOUND', `no admin API route for ${req.method} ${req.path}`));
  router.use(apiErrorHandler(deps.logger));
  return router;
}
