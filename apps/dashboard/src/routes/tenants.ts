import { Router } from 'express';
import { errorResponse } from '@singleshot/observability';
import type { AdminApiDeps } from '../deps';
import { ApiError } from '../errors';
import { adminRoute, tagged, type AdminRoute } from '../admin-route';
import { jsonAnswer } from '../admin-schemas';
import { escapeHtml } from '../story-page';
import { tenantsPage } from '../tenants-page';
import type { TenantsAnswer } from '../tenants-view';
import { html } from './story';

async function readTenants(deps: AdminApiDeps): Promise<TenantsAnswer> {
  if (!deps.tenants) throw new ApiError(404, 'NOT_FOUND', 'tenants are not wired in this dashboard');
  return deps.tenants.read();
}

const tenant = {
  type: 'object',
  required: ['tenant', 'weight', 'maxPending', 'waiting', 'atLimit'],
  properties: {
    tenant: { type: 'string' },
    weight: { type: 'integer', minimum: 1 },
    maxPending: { type: ['integer', 'null'], description: 'Its bound on waiting deliver jobs; null: none' },
    waiting: { type: 'integer', minimum: 0, description: 'Deliver jobs waiting in the fair queues' },
    atLimit: { type: 'boolean', description: 'At its maxPending: its events answer 429' },
  },
};

/** `GET /tenants` in the admin API: the tenants, their share and backlog. An operator's: it shows every tenant. */
export const TENANT_ROUTES: readonly AdminRoute[] = tagged('tenants', [
  adminRoute({
    method: 'GET', path: '/tenants',
    doc: {
      summary: 'The tenants: weight, maxPending, deliver jobs waiting in the fair queues, and whether each is at its bound (the page: /admin/tenants)',
      responses: {
        '200': jsonAnswer(
          {
            type: 'object',
            required: ['fairShare', 'window', 'tenants'],
            properties: { fairShare: { type: 'boolean' }, window: { type: 'integer', minimum: 1 }, tenants: { type: 'array', items: tenant } },
          },
          'The tenants',
        ),
        '404': errorResponse('Tenants are not wired in this dashboard (code `NOT_FOUND`)'),
      },
    },
    handle: async (deps) => ({ body: await readTenants(deps) }),
  }),
]);

/** The tenants as a page, mounted at `/admin/tenants` behind authentication, for operators. Read-only. */
export function tenantPageRoutes(deps: AdminApiDeps): Router {
  const router = Router();
  router.get('/', async (_req, res) => {
    let answer: TenantsAnswer;
    try {
      answer = await readTenants(deps);
    } catch (err) {
      if (err instanceof ApiError) return html(res, err.status, `<!doctype html><p data-problem>${escapeHtml(err.message)}</p>`);
      throw err;
    }
    html(res, 200, tenantsPage(answer, Date.now()));
  });
  return router;
}
