import type { ServerResponse } from 'node:http';
import { eventMessageKey, tenantField, tenantKey } from '@singleshot/core';
import { errorResponse } from '@singleshot/observability';
import { sendError } from '@singleshot/http';
import { tracingOn } from '@singleshot/tracing';
import type { IngestContext } from '../context';
import { jsonRoute, type IngestRoute, type RouteRequest } from '../http/route';
import { accepted, intakeErrors } from '../openapi-parts';
import { mayPost } from '../producer-auth';
import { acceptEvent, answerAccepted } from './answer';
import { eventBodySchema, type EventBody } from './event-body';
import { recipientsOf, sendAtOf } from './event-timing';

/**
 * `POST /v1/events`, the producers' hot path: the body is validated against
 * `eventBodySchema` by the server before `postEvent` sees it.
 */
export function eventsRoute(ctx: IngestContext): IngestRoute {
  return jsonRoute({
    method: 'POST',
    path: '/v1/events',
    gate: 'producer',
    bodyLimit: ctx.maxBodyBytes,
    json: {
      schema: eventBodySchema,
      name: 'Event',
      maxDepth: ctx.limits.maxJsonDepth,
      invalid: { code: 'INVALID_EVENT', message: 'the event is invalid' },
      onRejected: () => ctx.counters.received('unknown', 'invalid'),
    },
    handle: (request, res) => postEvent(ctx, res, request),
    doc: {
      tags: ['intake'],
      summary: 'Post a business event',
      parameters: [{ name: 'Idempotency-Key', in: 'header', schema: { type: 'string', minLength: 1 }, description: 'Takes the place of the body `id` when present.' }],
      responses: {
        '202': accepted,
        '400': errorResponse('Invalid input: `INVALID_JSON`, `INVALID_EVENT` (details list the problems), `MISSING_EVENT_ID`, `AMBIGUOUS_SEND_AT`, `SEND_AT_BEYOND_HORIZON`'),
        ...intakeErrors,
      },
    },
  });
}

/** One valid event of an admitted producer: its source checked against the key, its id settled, then accepted. */
async function postEvent(ctx: IngestContext, res: ServerResponse, request: RouteRequest<EventBody>): Promise<void> {
  const { body: event, producer } = request;
  // The route's gate admitted a producer before the handler runs.
  const key = producer as NonNullable<typeof producer>;
  if (!mayPost(key, event.source)) {
    ctx.counters.received(ctx.sourceLabel(event.source), 'invalid');
    return sendError(res, 403, 'SOURCE_NOT_ALLOWED', `key "${key.name}" may not post events of source "${event.source}"`, {
      key: key.name,
      source: event.source,
    });
  }
  const id = request.header('idempotency-key')?.trim() || event.id;
  if (!id) {
    ctx.counters.received(ctx.sourceLabel(event.source), 'invalid');
    // A consumer never invents the id: an invented one would make every retry a new event.
    return sendError(res, 400, 'MISSING_EVENT_ID', 'the event needs a stable "id" (or an Idempotency-Key header)');
  }
  const timing = sendAtOf(event, Date.now(), ctx.maxHorizonMs);
  if ('code' in timing) {
    ctx.counters.received(ctx.sourceLabel(event.source), 'invalid');
    return sendError(res, 400, timing.code, timing.message);
  }
  // No await at all without a bound: this is every event's path.
  const full = ctx.backlog ? await ctx.backlog.full(key.tenant) : undefined;
  if (full) {
    res.setHeader('retry-after', '1');
    return sendError(res, 429, 'TENANT_BACKLOG_FULL', `tenant "${full.tenant}" has ${full.waiting} notifications waiting, at its maxPending of ${full.maxPending}; retry later`, { ...full, retryAfterSeconds: 1 });
  }
  // A key bound to a tenant posts that tenant's events: same source and id, another tenant's message.
  const messageKey = tenantKey(key.tenant, eventMessageKey(event.source, id));
  await answerAccepted(
    ctx,
    res,
    messageKey,
    acceptEvent(ctx, event.source, {
      messageKey,
      via: 'api',
      input: {
        kind: 'event',
        ...tenantField(key.tenant),
        source: event.source,
        eventId: id,
        type: event.type,
        ...recipientsOf(event.recipients),
        data: event.data,
        ...timing,
        ...(event.cancellationKey !== undefined ? { cancellationKey: event.cancellationKey } : {}),
      },
      // The producer's W3C trace context: the acceptance joins its trace (read only when tracing is on).
      traceparent: tracingOn() ? request.header('traceparent') : undefined,
    }),
  );
}
