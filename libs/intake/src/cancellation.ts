import { z } from 'zod';
import { TENANT_ID, eventMessageKey, normalizeRecipient, tenantKey } from '@singleshot/core';
import type { CancelBy, Cancellations, MessageCancel, MessageStore, ReplicaWaits } from '@singleshot/store';

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
  tenant: z
    .string()
    .regex(TENANT_ID, 'expected a tenant id')
    .optional()
    .meta({ description: "Whose event or cancellation key it is (docs/tenants.md): for an operator or a key without a tenant; a key bound to a tenant may name its own only. Default: the asker's tenant." }),
  recipients: z.array(z.string().trim().min(1).max(512)).min(1).max(1000).optional().meta({ description: 'Cancel only these recipients (default: all).' }),
  reason: z.string().max(500).default(''),
});

export type CancellationBody = z.output<typeof cancellationBodySchema>;

/**
 * Who asks for a cancel, which sources it may cancel (undefined: any, as an
 * operator), and the tenant it is bound to (undefined: none, any message).
 */
export interface CancelScope {
  name: string;
  sources: ReadonlySet<string> | undefined;
  tenant?: string | undefined;
}

/**
 * The target a cancel names, once its asker may cancel it; or why not (4xx).
 * `owner`: the tenant a message named by its key must belong to (checked
 * before the cancel); `tenant`: whose cancellation key it is.
 */
export type CancelTarget =
  | { kind: 'message'; messageKey: string; owner?: string }
  | { kind: 'key'; source: string; cancellationKey: string; tenant?: string }
  | { kind: 'refused'; status: 400 | 403; code: 'INVALID_CANCELLATION' | 'CANCEL_NOT_ALLOWED'; message: string };

/**
 * Resolves a cancel's target. A message key does not say its source, so only
 * an asker that may cancel any source may name one; a key limited to one
 * source implies it. Ids and cancellation keys are the asker's tenant's, or
 * those of the `tenant` an asker without one names; a key bound to a tenant
 * may name no other.
 */
export function cancelTargetOf(body: CancellationBody, asker: CancelScope): CancelTarget {
  if (asker.tenant !== undefined && body.tenant !== undefined && body.tenant !== asker.tenant) {
    return { kind: 'refused', status: 403, code: 'CANCEL_NOT_ALLOWED', message: `key "${asker.name}" is bound to tenant "${asker.tenant}" and may not name another` };
  }
  // The tenant whose names the body uses: a bound key's own, or the one an operator names.
  const scope = { ...asker, tenant: asker.tenant ?? body.tenant };
  const named = [body.messageKey !== undefined, body.id !== undefined, body.cancellationKey !== undefined].filter(Boolean).length;
  if (named !== 1) return { kind: 'refused', status: 400, code: 'INVALID_CANCELLATION', message: 'give exactly one of messageKey, source + id, or cancellationKey' };
  if (body.messageKey !== undefined) {
    if (scope.sources !== undefined) return { kind: 'refused', status: 403, code: 'CANCEL_NOT_ALLOWED', message: `key "${scope.name}" is limited to some sources: cancel by source and id, or by cancellationKey` };
    // Another tenant's message key is known to its own keys only; one of this tenant's is checked before the cancel.
    return scope.tenant === undefined ? { kind: 'message', messageKey: body.messageKey } : { kind: 'message', messageKey: body.messageKey, owner: scope.tenant };
  }
  const only = scope.sources?.size === 1 ? [...scope.sources][0] : undefined;
  const source = body.source ?? only;
  if (source === undefined) return { kind: 'refused', status: 400, code: 'INVALID_CANCELLATION', message: 'name the source of the event (or of the cancellation key)' };
  if (scope.sources !== undefined && !scope.sources.has(source)) return { kind: 'refused', status: 403, code: 'CANCEL_NOT_ALLOWED', message: `key "${scope.name}" may not cancel events of source "${source}"` };
  // A bound key's event ids and cancellation keys are its tenant's own (core tenant.ts).
  if (body.id !== undefined) return { kind: 'message', messageKey: tenantKey(scope.tenant, eventMessageKey(source, body.id)) };
  const key = { kind: 'key', source, cancellationKey: body.cancellationKey as string } as const;
  return scope.tenant === undefined ? key : { ...key, tenant: scope.tenant };
}

/** What carrying out a cancel needs: the compare-and-sets, and the replica waits of their connection. */
export interface CancelPort {
  store: Pick<Cancellations, 'cancelMessage' | 'cancelByKey'>;
  /** Whose a message is, for a cancel by message key from a key bound to a tenant. */
  messages: Pick<MessageStore, 'tenantOf'>;
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
 * answer survives a failover. Undefined, with nothing done, for a message
 * that is not its `owner`'s (or did not arrive): the caller answers 404, as
 * for a message that does not exist. Throws when Redis does not answer (the
 * caller answers 503: a cancel is idempotent, the retry is safe).
 */
export async function carryOutCancel(
  port: CancelPort,
  target: Exclude<CancelTarget, { kind: 'refused' }>,
  recipients: readonly string[] | undefined,
  who: CancelBy,
): Promise<MessageCancel | undefined> {
  if (target.kind === 'message' && target.owner !== undefined && (await port.messages.tenantOf(target.messageKey)) !== target.owner) return undefined;
  const normalized = recipients ? [...new Set(recipients.map(normalizeRecipient))] : undefined;
  const done =
    target.kind === 'message'
      ? await port.store.cancelMessage(target.messageKey, normalized, who)
      : await port.store.cancelByKey(target.source, target.cancellationKey, normalized, who, target.tenant);
  if (port.replicas) await port.replicas.after(done.written);
  return done;
}

/** The `singleshot_cancellations_total` outcomes one cancel counts: one per operation, and `pending` once per message. */
export function cancelOutcomeLabels(done: MessageCancel): string[] {
  const labels: string[] = done.operations.map((o) => o.outcome);
  if (done.pending && done.first) labels.push('pending');
  return labels;
}
