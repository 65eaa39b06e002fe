import { cancelOutcomeLabels, carryOutCancel, type CancelPort, type CancelTarget } from '@singleshot/intake';
import type { Logger, Metrics } from '@singleshot/observability';
import type { CancelBy, MessageCancel } from '@singleshot/store';

/**
 * The dashboard's cancel: the same compare-and-sets and replica wait as
 * ingest's `POST /v1/cancellations` (libs/intake's carryOutCancel), counted
 * in `singleshot_cancellations_total` and logged with who asked; undefined
 * for a message of another tenant than the target's owner.
 */
export type Cancel = (target: Exclude<CancelTarget, { kind: 'refused' }>, recipients: readonly string[] | undefined, who: CancelBy) => Promise<MessageCancel | undefined>;

/** Binds the cancel to a runtime's stores, metrics and logger. */
export function runtimeCancel(port: CancelPort, deps: { metrics: Pick<Metrics, 'cancellations'>; logger: Logger }): Cancel {
  return async (target, recipients, who) => {
    const done = await carryOutCancel(port, target, recipients, who);
    if (!done) return undefined;
    for (const outcome of cancelOutcomeLabels(done)) deps.metrics.cancellations.inc({ outcome });
    deps.logger.info(
      { event: 'cancel_received', by: who.by, target: target.kind, operations: done.operations.length, pending: done.pending },
      'cancel answered',
    );
    return done;
  };
}
