import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { eventMessageKey, normalizeRecipient } from '@singleshot/core';
import { errorResponse } from '@singleshot/observability';
import { sendError, sendJson } from '@singleshot/http';
import type { MessageCancel } from '@singleshot/store';
import type { CancelPort, IngestContext } from '../context';
import { jsonRoute, type IngestRoute, type RouteRequest } from '../http/route';
import { intakeErrors } from '../openapi-parts';
import { mayPost, type Producer } from '../producer-auth';

/**
 * `POST /v1/cancellations` body: one target (a message key, an event by
 * source and id, or a cancellation key of a source), optionally some of its
 * recipients, and a reason that is journaled with each operation it ends.
 */
export const cancellationBodySchema = z.object({
  messageKey: z.string().regex(/^[0-9a-f]{64}$/, 'expected a 64-hex message key').optional(),
  source: z.string().min(1).max(200).optional(),
  id: z.string().min(1).max(512).optional(),
  cancellationKey: z.string().min(1).max(200).optional(),
  recipients: z.array(z.string().trim().min(1).max(512)).min(1).max(1000).optional().meta({ description: 'Cancel only these recipients (default: all).' }),
  reason: z.string().max(500).default(''),
});

type CancellationBody = z.output<typeof cancellationBodySchema>;

/** The target a cancel names, once its producer may cancel it; or why not (4xx). */
type Target =
  | { kind: 'message'; messageKey: string }
  | { kind: 'key'; source: string; cancellationKey: string }
  | { kind: 'refused'; status: 400 | 403; code: 'INVALID_CANCELLATION' | 'CANCEL_NOT_ALLOWED'; message: string };

function targetOf(body: CancellationBody, producer: Producer): Target {
  const named = [body.messageKey !== undefined, body.id !== undefined, body.cancellationKey !== undefined].filter(Boolean).length;
  if (named !== 1) return { kind: 'refused', status: 400, code: 'INVALID_CANCELLATION', message: 'give exactly one of messageKey, source + id, or cancellationKey' };
  if (body.messageKey !== undefined) {
    // A message key does not say its source: only a producer that may post any source may name one.
    if (producer.sources !== undefined) return { kind: 'refused', status: 403, code: 'CANCEL_NOT_ALLOWED', message: `key "${producer.name}" is limited to some sources: cancel by source and id, or by cancellationKey` };
    return { kind: 'message', messageKey: body.messageKey };
  }
  // A key limited to one source implies it; otherwise the source must be named.
  const only = producer.sources?.size === 1 ? [...producer.sources][0] : undefined;
  const source = body.source ?? only;
  if (source === undefined) return { kind: 'refused', status: 400, code: 'INVALID_CANCELLATION', message: 'name the source of the event (or of the cancellation key)' };
  if (!mayPost(producer, source)) return { kind: 'refused', status: 403, code: 'CANCEL_NOT_ALLOWED', message: `key "${producer.name}" may not cancel events of source "${source}"` };
  if (body.id !== undefined) return { kind: 'message', messageKey: eventMessageKey(source, body.id) };
  return { kind: 'key', source, cancellationKey: body.cancellationKey as string };
}

/** `POST /v1/cancellations`: a synchronous, definite answer per operation (docs/scheduling.md). */
export function cancellationsRoute(ctx: IngestContext): IngestRoute {
  return jsonRoute({
    method: 'POST',
    path: '/v1/cancellations',
    gate: 'producer',
    bodyLimit: ctx.maxBodyBytes,
    json: {
      schema: cancellationBodySchema,
      name: 'Cancellation',
      maxDepth: ctx.limits.maxJsonDepth,
      invalid: { code: 'INVALID_CANCELLATION', message: 'the cancellation is invalid' },
    },
    handle: (request, res) => postCancellation(ctx, res, request),
    doc: {
      tags: ['intake'],
      summary: 'Cancel an event, some of its recipients, or every event of a cancellation key',
      responses: {
        '200': {
          description:
            'What the cancel did to each operation (`cancelled`, `in_flight`, `already_sent`, `already_cancelled`, `already_dead`, `already_suppressed`); `pending` when operations are still to come, which are born cancelled.',
        },
        '400': errorResponse('`INVALID_JSON`, `INVALID_CANCELLATION`'),
        ...intakeErrors,
        '403': errorResponse('`CANCEL_NOT_ALLOWED`: the key may not cancel this target'),
      },
    },
  });
}

async function postCancellation(ctx: IngestContext, res: ServerResponse, request: RouteRequest<CancellationBody>): Promise<void> {
  const { body } = request;
  const producer = request.producer as Producer;
  const cancels = ctx.cancels as CancelPort;
  const target = targetOf(body, producer);
  if (target.kind === 'refused') return sendError(res, target.status, target.code, target.message);
  const recipients = body.recipients ? [...new Set(body.recipients.map(normalizeRecipient))] : undefined;
  const who = { by: producer.name, reason: body.reason };
  let done: MessageCancel;
  try {
    done =
      target.kind === 'message'
        ? await cancels.store.cancelMessage(target.messageKey, recipients, who)
        : await cancels.store.cancelByKey(target.source, target.cancellationKey, recipients, who);
    // A definite answer must survive a failover: what it wrote is on a replica first.
    const messages = target.kind === 'message' ? [target.messageKey] : [];
    await cancels.replicate(messages, done.operations.map((o) => o.operationKey));
  } catch (err) {
    ctx.logger.warn({ event: 'cancel_store_unavailable', err: { code: (err as { code?: unknown }).code, message: (err as Error).message } }, 'cancel not carried out: Redis unavailable');
    res.setHeader('retry-after', '1');
    return sendError(res, 503, 'STORE_UNAVAILABLE', 'the cancel could not be carried out; retry (it is idempotent)');
  }
  for (const op of done.operations) ctx.metrics.cancellations.inc({ outcome: op.outcome });
  if (done.pending && done.first) ctx.metrics.cancellations.inc({ outcome: 'pending' });
  ctx.logger.info(
    { event: 'cancel_received', by: producer.name, target: target.kind, operations: done.operations.length, pending: done.pending },
    'cancel answered',
  );
  sendJson(res, 200, { operations: done.operations, pending: done.pending });
}
