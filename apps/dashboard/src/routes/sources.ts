import { adminRoute, tagged, type AdminRoute } from '../admin-route';
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
export const SOURCE_ROUTES: readonly AdminRoute[] = tagged('sources', [
  adminRoute({
    method: 'GET', path: '/sources',
    doc: {
      summary: 'Every configured source with what a relay last reported of it',
      responses: { '200': jsonAnswer({ type: 'object', required: ['sources'], properties: { sources: { type: 'array', items: source } } }, 'Sources') },
    },
    handle: async (deps) => ({ body: { sources: deps.sources ? await deps.sources.list() : [] } }),
  }),
]);
