import type { ServerResponse } from 'node:http';
import { Router, type Request, type Response } from 'express';
import { eventMessageKey } from '@singleshot/core';
import { jsonDepth, sendError } from '@singleshot/http';
import type { IngestContext } from '../context';
import { mayPost, producerOf, type Producer } from '../producer-auth';
import { formatIssues } from '@singleshot/queues';
import { acceptEvent, answerAccepted } from './answer';
import { eventBodySchema, plainEventBody } from './event-body';

/**
 * `POST /v1/events` once the body is read and the producer admitted: the one
 * implementation behind the fast path (fast-events.ts) and the Express route.
 * Answers every outcome itself; rejects only on an unexpected error (a 500).
 */
export async function postEvent(ctx: IngestContext, res: ServerResponse, producer: Producer, body: Buffer, idempotencyKey: string | undefined): Promise<void> {
  const text = body.toString('utf8');
  if (jsonDepth(text, ctx.limits.maxJsonDepth) > ctx.limits.maxJsonDepth) {
    ctx.counters.received('unknown', 'invalid');
    return sendError(res, 400, 'INVALID_EVENT', `the JSON body is nested deeper than ${ctx.limits.maxJsonDepth} levels (ingest.maxJsonDepth)`, {
      limit: 'maxJsonDepth',
      max: ctx.limits.maxJsonDepth,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    ctx.counters.received('unknown', 'invalid');
    return sendError(res, 400, 'INVALID_JSON', 'the body is not valid JSON');
  }
  let event = plainEventBody(json);
  if (!event) {
    const parsed = eventBodySchema.safeParse(json);
    if (!parsed.success) {
      ctx.counters.received('unknown', 'invalid');
      return sendError(res, 400, 'INVALID_EVENT', 'the event is invalid', formatIssues(parsed.error));
    }
    event = parsed.data;
  }
  if (!mayPost(producer, event.source)) {
    ctx.counters.received(ctx.sourceLabel(event.source), 'invalid');
    return sendError(res, 403, 'SOURCE_NOT_ALLOWED', `key "${producer.name}" may not post events of source "${event.source}"`, {
      key: producer.name,
      source: event.source,
    });
  }
  const id = idempotencyKey?.trim() || event.id;
  if (!id) {
    ctx.counters.received(ctx.sourceLabel(event.source), 'invalid');
    // A consumer never invents the id: an invented one would make every retry a new event.
    return sendError(res, 400, 'MISSING_EVENT_ID', 'the event needs a stable "id" (or an Idempotency-Key header)');
  }
  const messageKey = eventMessageKey(event.source, id);
  await answerAccepted(
    ctx,
    res,
    messageKey,
    acceptEvent(ctx, event.source, {
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
    }),
  );
}

/** The Express route of `POST /v1/events` (what the fast path does not take: `/v1/events/`, other spellings, compressed bodies). */
export function eventsRouter(ctx: IngestContext): Router {
  const router = Router();
  router.post('/', (req: Request, res: Response) => postEvent(ctx, res, producerOf(res), req.body as Buffer, req.get('idempotency-key')));
  return router;
}
