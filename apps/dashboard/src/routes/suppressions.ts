import { Router } from 'express';
import { z } from 'zod';
import { suppressionAddSchema, suppressionRemoveSchema, SuppressionInputError } from '@singleshot/intake';
import type { AdminApiDeps } from '../deps';
import { principalOf } from '../auth';
import { ApiError } from '../errors';
import { parseInput } from '../params';

const count = (max: number, fallback: number) => z.coerce.number().int().min(1).max(max).default(fallback);
const listQuery = z.strictObject({
  limit: count(1000, 100),
  cursor: z.string().min(1).max(8192).optional(),
  // Named, so a client still paging by offset learns why instead of meeting an unknown key.
  offset: z.undefined({ error: 'the list is paged by cursor: pass the nextCursor of the previous page as cursor' }).optional(),
});
const auditQuery = z.strictObject({ limit: count(1000, 100), before: z.string().regex(/^\d{1,15}-\d{1,15}$/, 'expected a stream id such as 1700000000000-0').optional() });
const recipientParams = z.strictObject({ recipient: z.string().trim().min(1).max(512) });

/** An input the store must not take is the operator's to fix: a 400 naming it. */
async function checked<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof SuppressionInputError) throw new ApiError(400, err.code as 'UNKNOWN_CHANNEL' | 'INVALID_REQUEST', err.message);
    throw err;
  }
}

/**
 * The suppression list (docs/feedback.md "Suppression list"): `GET
 * /suppressions` (recipients with their suppressions and opt-outs, paged by
 * cursor, newest on the list first),
 * `GET /suppressions/audit` (every change, newest first), `GET
 * /suppressions/:recipient`, `POST /suppressions` and `DELETE /suppressions`
 * (origin `operator`, by `dashboard:<who>` as a replay records it). The two
 * changes sit behind the admin API's authentication and origin guard; the
 * claim reads what they wrote, so the answer means no claim after it sends to
 * that recipient (or, for a removal, that the next one may).
 */
export function suppressionRoutes(deps: AdminApiDeps): Router {
  const router = Router();
  const need = () => {
    if (!deps.suppressions) throw new ApiError(404, 'NOT_FOUND', 'suppressions are not wired in this dashboard');
    return deps.suppressions;
  };

  router.get('/suppressions', async (req, res) => {
    const { limit, cursor } = parseInput(listQuery, req.query, 'query');
    const page = await checked(() => need().admin.list(cursor, limit));
    res.json({ limit, ...page });
  });

  // Before `/:recipient`: "audit" is this listing, not a recipient.
  router.get('/suppressions/audit', async (req, res) => {
    const { limit, before } = parseInput(auditQuery, req.query, 'query');
    const entries = await need().audit({ limit, ...(before ? { before } : {}) });
    res.json({ limit, entries, ...(entries.length === limit ? { before: entries[entries.length - 1]?.id } : {}) });
  });

  router.get('/suppressions/:recipient', async (req, res) => {
    const { recipient } = parseInput(recipientParams, req.params, 'path');
    res.json(await need().admin.get(recipient));
  });

  router.post('/suppressions', async (req, res) => {
    const { admin } = need();
    const body = parseInput(suppressionAddSchema, req.body ?? {}, 'body');
    const by = `dashboard:${principalOf(res).who}`;
    const added = await checked(() => admin.add(body, by));
    deps.logger.info({ event: 'suppression_added', by, channel: body.channel, category: body.category, added }, 'operator suppression');
    res.status(added ? 201 : 200).json({ added, by, recipient: await admin.get(body.recipient) });
  });

  router.delete('/suppressions', async (req, res) => {
    const { admin } = need();
    const body = parseInput(suppressionRemoveSchema, req.body ?? {}, 'body');
    const by = `dashboard:${principalOf(res).who}`;
    const removed = await checked(() => admin.remove(body, by));
    deps.logger.info({ event: 'suppression_removed', by, channel: body.channel, category: body.category, removed }, 'operator suppression removal');
    res.json({ removed, by, recipient: await admin.get(body.recipient) });
  });

  return router;
}
