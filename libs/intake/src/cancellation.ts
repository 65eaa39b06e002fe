import { z } from 'zod';
import { eventMessageKey, normalizeRecipient } from '@singleshot/core';
import type { CancelBy, Cancellations, MessageCancel, ReplicaWaits } from '@singleshot/store';

/**
 * A cancel's body, the same at ingest (`POST /v1/cancellations`) and in the
 * dashboard's admin API: one target (a message key, an event by source and
 * id, or a cancellation key of a source), optionally some of its recipients,
 * and a reason that is journaled with each operation it ends.
 */
export const cancellationBodySchema = z.object({
  messageKey: z.string().regex(/^[0-9a-f]{64}$/, 'expected a 64-hex message key').optional(),
  source: z.string().min(1).max(200).optional(),
  id: z.string().min(1).max(512).optional(),
  cancellationKey: z.string().min(1).max(200).optional(),
  recipients: z.array(z.string().trim().min(1).max(512)).min(1).max(1000).optional().meta({ description: 'Cancel only these recipients (default: all).' }),
  reason: z.string().max(500).default(''),
});

export type CancellationBody = z.output<typeof cancellationBodySchema>;

/** Who asks for a cancel, and which sources it may cancel (undefined: any, as an operator). */
export interface CancelScope {
  name: string;
  sources: ReadonlySet<string> | undefined;
}

/** The target a cancel names, once its asker may cancel it; or why not (4xx). */
export type CancelTarget =
  | { kind: 'message'; messageKey: string }
  | { kind: 'key'; source: string; cancellationKey: string }
  | { kind: 'refused'; status: 400 | 403; code: 'INVALID_CANCELLATION' | 'CANCEL_NOT_ALLOWED'; message: string };

/**
 * Resolves a cancel's target. A message key does not say its source, so only
 * an asker that may cancel any source may name one; a key limited to one
 * source implies it.
 */
export function cancelTargetOf(body: CancellationBody, scope: CancelScope): CancelTarget {
  const named = [body.messageKey !== undefined, body.id !== undefined, body.cancellationKey !== undefined].filter(Boolean).length;
  if (named !== 1) return { kind: 'refused', status: 400, code: 'INVALID_CANCELLATION', message: 'give exactly one of messageKey, source + id, or cancellationKey' };
  if (body.messageKey !== undefined) {
    if (scope.sources !== undefined) return { kind: 'refused', status: 403, code: 'CANCEL_NOT_ALLOWED', message: `key "${scope.name}" is limited to some sources: cancel by source and id, or by cancellationKey` };
    return { kind: 'message', messageKey: body.messageKey };
  }
  const only = scope.sources?.size === 1 ? [...scope.sources][0] : undefined;
  const source = body.source ?? only;
  if (source === undefined) return { kind: 'refused', status: 400, code: 'INVALID_CANCELLATION', message: 'name the source of the event (or of the cancellation key)' };
  if (scope.sources !== undefined && !scope.sources.has(source)) return { kind: 'refused', status: 403, code: 'CANCEL_NOT_ALLOWED', message: `key "${scope.name}" may not cancel events of source "${source}"` };
  if (body.id !== undefined) return { kind: 'message', messageKey: eventMessageKey(source, body.id) };
  return { kind: 'key', source, cancellationKey: body.cancellationKey as string };
}

/** What carrying out a cancel needs: the compare-and-sets, and the replica waits of their connection. */
export interface CancelPort {
  store: Pick<Cancellations, 'cancelMessage' | 'cancelByKey'>;
  /**
   * The replica waits of the store's connection on a Redis Cluster: the
   * cancel is answered only once what it wrote is on a replica. Absent on a
   * single Redis (no wait). Its keys are known only once it is done (the
   * operations it found), so no owners are read before it.
   */
  replicas?: ReplicaWaits | undefined;
}

/**
 * Carries out a resolved cancel: the recipients normalized as the decision
 * normalizes them, the store's cancel, then the replica wait, so a definite
 * answer survives a failover. Throws when Redis does not answer (the caller
 * answers 503: a cancel is idempotent, the retry is safe).
 */
export async function carryOutCancel(
  port: CancelPort,
  target: Exclude<CancelTarget, { kind: 'refused' }>,
  recipients: readonly string[] | undefined,
  who: CancelBy,
): Promise<MessageCancel> {
  const normalized = recipients ? [...new Set(recipients.map(normalizeRecipient))] : undefined;
  const done =
    target.kind === 'message'
      ? await port.store.cancelMessage(target.messageKey, normalized, who)
      : await port.store.cancelByKey(target.source, target.cancellationKey, normalized, who);
  if (port.replicas) await port.replicas.after(done.written);
  return done;
}

/** The `singleshot_cancellations_total` outcomes one cancel counts: one per operation, and `pending` once per message. */
export function cancelOutcomeLabels(done: MessageCancel): string[] {
  const labels: string[] = done.operations.map((o) => o.outcome);
  if (done.pending && done.first) labels.push('pending');
  return labels;
}
