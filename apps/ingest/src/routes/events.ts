import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { eventMessageKey } from '@singleshot/core';
import { jsonDepth, sendError } from '@singleshot/http';
import type { IngestContext } from '../context';
import { mayPost, producerOf } from '../producer-auth';
import { formatIssues } from '@singleshot/queues';
import { acceptEvent, answerAccepted } from './answer';

/** `POST /v1/events` body (docs/contract.md). `id` may come from `Idempotency-Key` instead. */
export const eventBodySchema = z.object({
  id: z.string().min(1).max(512).optional(),
  source: z
    .string()
    .min(1)
    .max(200)
    .refine((s) => s !== 'mail', 'source "mail" is reserved for mail ingestion'),
  type: z.string().min(1).max(200),
  recipients: z.array(z.string().trim().min(1).max(512)).max(1000).optional(),
  data: z.record(z.string(), z.unknown()).default({}),
});

export function eventsRouter(ctx: IngestContext): Router {
  const router = Router();
  router.post('/', async (req: Request, res: Response) => {
    const text = (req.body as Buffer).toString('utf8');
    if (jsonDepth(text, ctx.limits.maxJsonDepth) > ctx.limits.maxJsonDepth) {
      ctx.metrics.eventsReceived.inc({ source: 'unknown', result: 'invalid' });
      return sendError(res, 400, 'INVALID_EVENT', `the JSON body is nested deeper than ${ctx.limits.maxJsonDepth} levels (ingest.maxJsonDepth)`, {
        limit: 'maxJsonDepth',
        max: ctx.limits.maxJsonDepth,
      });
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      ctx.metrics.eventsReceived.inc({ source: 'unknown', result: 'invalid' });
      return sendError(res, 400, 'INVALID_JSON', 'the body is not valid JSON');
    }
    const parsed = eventBodySchema.safeParse(json);
    if (!parsed.success) {
      ctx.metrics.eventsReceived.inc({ source: 'unknown', result: 'invalid' });
      return sendError(res, 400, 'INVALID_EVENT', 'the event is invalid', formatIssues(parsed.error));
    }
    const event = parsed.data;
    const producer = producerOf(res);
    if (!mayPost(producer, event.source)) {
      ctx.metrics.eventsReceived.inc({ source: ctx.sourceLabel(event.source), result: 'invalid' });
      return sendError(res, 403, 'SOURCE_NOT_ALLOWED', `key "${producer.name}" may not post events of source "${event.source}"`, {
        key: producer.name,
        source: event.source,
      });
    }
    const header = req.get('idempotency-key')?.trim();
    const id = header || event.id;
    if (!id) {
      ctx.metrics.eventsReceived.inc({ source: ctx.sourceLabel(event.source), result: 'invalid' });
      // A consumer never invents the id: an invented one would make every retry a new event.
      return sendError(res, 400, 'MISSING_EVENT_ID', 'the event needs a stable "id" (or an Idempotency-Key header)');
    }
    const messageKey = eventMessageKey(event.source, id);
    await answerAccepted(ctx, res, messageKey, () => acceptEvent(ctx, event.source, {
      messageKey,
      via: 'api',
      input: {
        kind: 'event',
        source: event.source,
        eventId: id,
        type: event.type,
        ...(event.recipients ? { recipients: event.recipients } : {}),
        data: event.data,
      },
    }));
  });
  return router;
}
