import { Router } from 'express';
import { z } from 'zod';
import { cancelTargetOf, cancellationBodySchema, type CancelScope } from '@singleshot/intake';
import type { AdminApiDeps } from '../deps';
import { principalOf } from '../auth';
import { ApiError } from '../errors';
import { parseInput } from '../params';

const listQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(1000).default(100) });

// An operator may cancel any source's events, as the CLI may: the dashboard's
// credentials are the operator's, not a producer key limited to some sources.
const OPERATOR: Omit<CancelScope, 'name'> = { sources: undefined };

/**
 * What is still to come and how to take it back: `GET /scheduled` lists the
 * scheduled operations soonest first (due time and why), `POST /cancellations`
 * cancels with the body of ingest's `POST /v1/cancellations`, journaled as
 * `dashboard:<who>`. The cancel changes state: the origin guard in front of
 * the admin API refuses it from another site, as it refuses a replay.
 */
export function schedulingRoutes(deps: AdminApiDeps): Router {
  const router = Router();

  router.get('/scheduled', async (req, res) => {
    if (!deps.scheduled) throw new ApiError(404, 'NOT_FOUND', 'scheduled operations are not wired in this dashboard');
    const { limit } = parseInput(listQuery, req.query, 'query');
    const { total, entries } = await deps.scheduled.soonest(limit);
    const scheduled = await Promise.all(
      entries.map(async ({ operationKey, dueAt }) => {
        const op = await deps.operations.get(operationKey);
        return {
          operationKey,
          dueAt,
          reason: op?.scheduleReason ?? null,
          messageKey: op?.messageKey ?? null,
          recipient: op?.recipient ?? null,
          channel: op?.channel ?? null,
          status: op?.status ?? null,
        };
      }),
    );
    res.json({ total, limit, scheduled });
  });

  router.post('/cancellations', async (req, res) => {
    if (!deps.cancel) throw new ApiError(404, 'NOT_FOUND', 'cancels are not wired in this dashboard');
    const body = parseInput(cancellationBodySchema, req.body ?? {}, 'body');
    const { who } = principalOf(res);
    const target = cancelTargetOf(body, { ...OPERATOR, name: who });
    if (target.kind === 'refused') throw new ApiError(target.status, target.code, target.message);
    const by = `dashboard:${who}`;
    let done;
    try {
      done = await deps.cancel(target, body.recipients, { by, reason: body.reason });
    } catch (err) {
      // As at ingest: whatever the store did not confirm may be retried, a cancel is idempotent.
      deps.logger.warn({ event: 'cancel_store_unavailable', err: { code: (err as { code?: unknown }).code, message: (err as Error).message } }, 'cancel not carried out: Redis unavailable');
      res.setHeader('retry-after', '1');
      throw new ApiError(503, 'STORE_UNAVAILABLE', 'the cancel could not be carried out; retry (it is idempotent)');
    }
    res.json({ operations: done.operations, pending: done.pending, by });
  });

  return router;
}
