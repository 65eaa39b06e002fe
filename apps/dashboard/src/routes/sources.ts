import { adminRoute, type AdminRoute } from '../admin-route';
import { jsonAnswer } from '../admin-schemas';

const source = {
  type: 'object',
  required: ['source', 'type', 'state', 'lag', 'reportedAt', 'reporter'],
  properties: {
    source: { type: 'string' },
    type: { type: 'string' },
    state: { enum: ['reachable', 'unreachable', 'stale', 'no report'] },
    lag: { type: ['integer', 'null'], minimum: 0 },
    reportedAt: { type: ['string', 'null'], format: 'date-time' },
    reporter: { type: ['string', 'null'] },
  },
};

/** `GET /sources`: every configured source with what a relay last reported of it (state, lag, when, by whom). */
export const SOURCE_ROUTES: readonly AdminRoute[] = [
  adminRoute({
    method: 'GET',
    path: '/sources',
    doc: {
      tags: ['sources'],
      summary: 'Every configured source with what a relay last reported of it',
      responses: { '200': jsonAnswer({ type: 'object', required: ['sources'], properties: { sources: { type: 'array', items: source } } }, 'Sources') },
    },
    handle: async (deps) => ({ body: { sources: deps.sources ? await deps.sources.list() : [] } }),
  }),
];
