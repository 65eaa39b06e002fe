import { Router } from 'express';
import { z } from 'zod';
import type { AdminApiDeps } from '../deps';
import { digestsPage, digestsProblemPage, type OpenDigestList } from '../digests-page';
import { ApiError } from '../errors';
import { parseInput } from '../params';
import { html } from './story';

const listQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(1000).default(100) });

/**
 * Reads the open digests for the API and the page alike: the total from the
 * shards' open indexes, then at most `limit` digests with their counts,
 * soonest close first. Throws `ApiError` (`INVALID_REQUEST`, `NOT_FOUND`).
 */
export async function readOpenDigests(deps: AdminApiDeps, query: unknown): Promise<OpenDigestList> {
  if (!deps.digests) throw new ApiError(404, 'NOT_FOUND', 'open digests are not wired in this dashboard');
  const { limit } = parseInput(listQuery, query, 'query');
  const [open, details] = await Promise.all([deps.digests.openCount(), deps.digests.openDigests(limit)]);
  // Named field by field: the answer is a documented shape, not whatever the store adds later.
  const digests = details.map(({ id, group, seq, route, recipient, key, count, openedAt, closeAt }) => ({ id, group, seq, route, recipient, key, count, openedAt, closeAt }));
  return { open, limit, digests };
}

/** `GET /digests?limit=` in the admin API: `{ open, limit, digests }`, soonest close first. */
export function digestRoutes(deps: AdminApiDeps): Router {
  const router = Router();
  router.get('/digests', async (req, res) => {
    res.json(await readOpenDigests(deps, req.query));
  });
  return router;
}

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
