import type { ServerResponse } from 'node:http';
import { errorResponse } from '@singleshot/observability';
import { sendError, sendJson } from '@singleshot/http';
import { cancelOutcomeLabels, cancelTargetOf, cancellationBodySchema, carryOutCancel, type CancelPort, type CancellationBody } from '@singleshot/intake';
import { UpgradeRequiredError, layoutRefusal, type MessageCancel } from '@singleshot/store';
import type { IngestContext } from '../context';
import { jsonRoute, type IngestRoute, type RouteRequest } from '../http/route';
import { intakeErrors } from '../openapi-parts';
import type { Producer } from '../producer-auth';

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
            'What the cancel did to each operation (`cancelled`, `in_flight`, `already_sent`, `already_cancelled`, `already_dead`, `already_suppressed`) and to each place in a digest (with `digest`; `digest_closed` for a member of a closed digest, which goes with it); `pending` when operations are still to come, which are born cancelled.',
        },
        '400': errorResponse('`INVALID_JSON`, `INVALID_CANCELLATION`'),
        ...intakeErrors,
        '403': errorResponse('`CANCEL_NOT_ALLOWED`: the key may not cancel this target'),
        '404': errorResponse('`NOT_FOUND`: a key bound to a tenant named a message key that is not one of its tenant\'s messages'),
      },
    },
  });
}

async function postCancellation(ctx: IngestContext, res: ServerResponse, request: RouteRequest<CancellationBody>): Promise<void> {
  const { body } = request;
  const producer = request.producer as Producer;
  const cancels = ctx.cancels as CancelPort;
  const target = cancelTargetOf(body, producer);
  if (target.kind === 'refused') return sendError(res, target.status, target.code, target.message);
  const who = { by: producer.name, reason: body.reason };
  let done: MessageCancel | undefined;
  try {
    done = await carryOutCancel(cancels, target, body.recipients, who);
  } catch (err) {
    res.setHeader('retry-after', '1');
    if (err instanceof UpgradeRequiredError) {
      // Nothing was done; a process of the newer version can do it.
      layoutRefusal.note(err.held);
      return sendError(res, 503, 'UPGRADE_REQUIRED', err.message);
    }
    ctx.logger.warn({ event: 'cancel_store_unavailable', err: { code: (err as { code?: unknown }).code, message: (err as Error).message } }, 'cancel not carried out: Redis unavailable');
    return sendError(res, 503, 'STORE_UNAVAILABLE', 'the cancel could not be carried out; retry (it is idempotent)');
  }
  // Another tenant's message answers as one that does not exist: its existence is not this key's to learn.
  if (!done) return sendError(res, 404, 'NOT_FOUND', `no message ${body.messageKey ?? ''} of tenant "${producer.tenant ?? ''}"`);
  for (const outcome of cancelOutcomeLabels(done)) ctx.metrics.cancellations.inc({ outcome });
  ctx.logger.info(
    { event: 'cancel_received', by: producer.name, target: target.kind, operations: done.operations.length, pending: done.pending },
    'cancel answered',
  );
  sendJson(res, 200, { operations: done.operations, pending: done.pending });
}
