import { Router } from 'express';
import type { AdminApiDeps } from '../deps';
import { digestsPage, digestsProblemPage, type OpenDigestList } from '../digests-page';
import { ApiError } from '../errors';
import { listLimitQuery, parseInput } from '../params';
import { adminRoute, tagged, type AdminRoute } from '../admin-route';
import { hexKey, jsonAnswer } from '../admin-schemas';
import { errorResponse } from '@singleshot/observability';
import { html } from './story';


/**
 * Reads the open digests for the API and the page alike: the total from the
 * shards' open indexes, then at most `limit` digests with their counts,
 * soonest close first. Throws `ApiError` (`INVALID_REQUEST`, `NOT_FOUND`).
 */
export async function readOpenDigests(deps: AdminApiDeps, query: unknown): Promise<OpenDigestList> {
  if (!deps.digests) throw new ApiError(404, 'NOT_FOUND', 'open digests are not wired in this dashboard');
  const { limit } = parseInput(listLimitQuery, query, 'query');
  const [open, details] = await Promise.all([deps.digests.openCount(), deps.digests.openDigests(limit)]);
  // Named field by field: the answer is a documented shape, not whatever the store adds later.
  const digests = details.map(({ id, group, seq, route, recipient, key, count, openedAt, closeAt }) => ({ id, group, seq, route, recipient, key, count, openedAt, closeAt }));
  return { open, limit, digests };
}

const digest = {
  type: 'object',
  required: ['id', 'group', 'seq', 'route', 'recipient', 'key', 'count', 'openedAt', 'closeAt'],
  properties: {
    id: { ...hexKey, description: "The digest id: its flush operation's message key" },
    group: hexKey,
    seq: { type: 'integer', minimum: 1 },
    route: { type: 'string' },
    recipient: { type: 'string' },
    key: { type: 'string', description: 'The rendered digest key; empty: one digest per recipient' },
    count: { type: 'integer', minimum: 0 },
    openedAt: { type: 'number' },
    closeAt: { type: 'number' },
  },
};

/** `GET /digests?limit=` in the admin API: `{ open, limit, digests }`, soonest close first. */
export const DIGEST_ROUTES: readonly AdminRoute[] = tagged('scheduling', [
  adminRoute({
    method: 'GET', path: '/digests',
    query: listLimitQuery,
    doc: {
      summary: 'Open digests, soonest close first, with their item counts (the page: /admin/digests)',
      responses: {
        '200': jsonAnswer(
          {
            type: 'object',
            required: ['open', 'limit', 'digests'],
            properties: { open: { type: 'integer', minimum: 0, description: 'How many digests are open in all' }, limit: { type: 'integer' }, digests: { type: 'array', items: digest } },
          },
          'Open digests',
        ),
        '404': errorResponse('Digests are not wired in this dashboard (code `NOT_FOUND`)'),
      },
    },
    handle: async (deps, { query }) => ({ body: await readOpenDigests(deps, query) }),
  }),
]);

/**
 * The open digests as a page, mounted at `/admin/digests` behind the
 * dashboard's authentication and origin guard. Read-only.
 */
export function digestPageRoutes(deps: AdminApiDeps): Router {
  const router = Router();
  router.get('/', async (req, res) => {
    let list: OpenDigestList;
    try {
      list = await readOpenDigests(deps, req.query);
    } catch (err) {
      // The API's refusals as a page; anything else is the app's 500.
      if (err instanceof ApiError) return html(res, err.status, digestsProblemPage(err.message));
      throw err;
    }
    html(res, 200, digestsPage(list, Date.now()));
  });
  return router;
}
