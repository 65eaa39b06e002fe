import { Router } from 'express';
import { z } from 'zod';
import type { AdminApiDeps } from '../deps';
import { ApiError } from '../errors';
import { hexKeySchema, parseInput } from '../params';

const listQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(1000).default(100) });
const keyParams = z.strictObject({ key: hexKeySchema });

/**
 * Operations that wait before they may be sent (for a document), oldest
 * first: nothing waits silently. And a document's render state (status,
 * attempts, last error, checksum).
 */
export function waitingRoutes(deps: AdminApiDeps): Router {
  const router = Router();

  router.get('/waiting', async (req, res) => {
    if (!deps.documents) throw new ApiError(404, 'NOT_FOUND', 'documents are not wired in this dashboard');
    const { limit } = parseInput(listQuery, req.query, 'query');
    const waiting = await deps.documents.waiting(limit);
    const operations = await Promise.all(
      waiting.map(async ({ operationKey, since }) => {
        const op = await deps.operations.get(operationKey);
        return { operationKey, since, waitingFor: op?.waitingFor ?? null, recipient: op?.recipient ?? null, channel: op?.channel ?? null, status: op?.status ?? null };
      }),
    );
    res.json({ waiting: operations });
  });

  router.get('/documents/:key', async (req, res) => {
    if (!deps.documents) throw new ApiError(404, 'NOT_FOUND', 'documents are not wired in this dashboard');
    const { key } = parseInput(keyParams, req.params, 'path');
    const doc = await deps.documents.get(key);
    if (!doc) throw new ApiError(404, 'NOT_FOUND', `no document ${key} (records are kept for the retention period)`);
    const { job: _job, ...rest } = doc;
    res.json({ document: rest });
  });

  return router;
}
