import { Router } from 'express';
import { z } from 'zod';
import { listDead } from '@singleshot/queues';
import type { AdminApiDeps } from '../deps';
import { principalOf } from '../auth';
import { ApiError } from '../errors';
import { hexKeySchema, parseInput } from '../params';
import type { ReplayOutcome } from '../replay';

const dlqQuerySchema = z.strictObject({
  limit: z.string().regex(/^\d+$/, 'expected a positive integer').transform(Number).pipe(z.int().min(1).max(1000)).optional(),
  offset: z.string().regex(/^\d+$/, 'expected a non-negative integer').transform(Number).pipe(z.int().min(0).max(1_000_000)).optional(),
  /** A reason (`permanent`, `attempts_exhausted`, …), an error code, or a channel. */
  filter: z.string().min(1).max(200).optional(),
});

/** A replay that did nothing is not an error when the operation was sent: nothing more can be done. */
function answerOf(outcome: ReplayOutcome): { status: number; message: string } {
  switch (outcome.result) {
    case 'replayed':
      return { status: 202, message: `queued for delivery again under the same operation key (was ${outcome.from})` };
    case 'already_sent':
      return { status: 200, message: `already sent (${outcome.provider} ${outcome.externalId}); nothing was sent again` };
    case 'not_replayable':
      return { status: 409, message: `the operation is ${outcome.status}, not dead or suppressed: it is still in progress and a replay would change nothing` };
    case 'not_found':
      return { status: 404, message: 'no such operation (never claimed, or past the retention period)' };
  }
}

/** `GET /dlq` (dead operations, oldest first) and `POST /dlq/:key/replay`. */
export function dlqRoutes(deps: AdminApiDeps): Router {
  const router = Router();

  router.get('/dlq', async (req, res) => {
    const { limit = 100, offset = 0, filter } = parseInput(dlqQuerySchema, req.query, 'query');
    const [depth, entries] = await Promise.all([
      deps.queues.dead.getWaitingCount(),
      listDead(deps.queues, { limit: offset + limit, ...(filter ? { filter } : {}) }),
    ]);
    const items = await Promise.all(
      entries.slice(offset).map(async (d) => {
        const rendered = d.job as Partial<Record<'recipient' | 'channel' | 'route' | 'messageKey', unknown>>;
        const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
        // The record stays until replayed; the state says where the operation is now.
        const current = await deps.operations.get(d.operationKey);
        return {
          operationKey: d.operationKey,
          messageKey: text(rendered.messageKey),
          recipient: text(rendered.recipient),
          channel: text(rendered.channel),
          route: text(rendered.route),
          reason: d.reason,
          error: d.error,
          attempts: d.attempts.length,
          diedAt: d.diedAt,
          status: current?.status ?? null,
        };
      }),
    );
    res.json({ depth, offset, limit, ...(filter ? { filter } : {}), items });
  });

  router.post('/dlq/:key/replay', async (req, res) => {
    const { key } = parseInput(z.strictObject({ key: hexKeySchema }), req.params, 'path');
    const { who } = principalOf(res);
    const outcome = await deps.replay(key, { who, via: 'api' });
    const { status, message } = answerOf(outcome);
    if (status >= 400) throw new ApiError(status, outcome.result === 'not_found' ? 'NOT_FOUND' : 'NOT_REPLAYABLE', `${key}: ${message}`, outcome);
    res.status(status).json({ ...outcome, message, by: who });
  });

  return router;
}
