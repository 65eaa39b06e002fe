import { describeError } from '@singleshot/core';
import type { OperationStatus } from '@singleshot/core';
import type { LookupTarget, Provider } from '@singleshot/providers';
import type { DeliverDeps, ErrorInfo } from './deliver-types';
import type { LeaseKeeper } from './lease-keeper';

export type ReconcileVerdict =
  | { kind: 'found'; provider: string; externalId: string }
  /** Every provider in `asked` said it does not have the operation. */
  | { kind: 'not_found'; asked: string[] }
  | { kind: 'unknown'; provider: string; error: ErrorInfo }
  | { kind: 'unresolvable'; provider: string };

/**
 * Asks the providers a previous attempt may have reached whether they have the
 * operation (docs/protocol.md invariant 5). After an in-doubt outcome that is the provider it
 * names; after a crash mid-send (`sending`) it can be any provider of the chain.
 * A provider that cannot be asked follows `inDoubtPolicy`: `resend` accepts the
 * risk of a second copy (SMTP carries the same Message-ID), `dead` stops.
 */
export async function reconcile(
  operationKey: string,
  chain: Provider[],
  claim: { previousStatus: OperationStatus; lastProvider: string; keeper: LeaseKeeper },
  deps: Pick<DeliverDeps, 'policy' | 'metrics' | 'logger'>,
  target?: LookupTarget,
): Promise<ReconcileVerdict> {
  const named = chain.find((p) => p.name === claim.lastProvider);
  const suspects = claim.previousStatus === 'in_doubt' && named ? [named] : chain;
  const asked: string[] = [];
  for (const provider of suspects) {
    if (!provider.lookup) {
      deps.metrics.reconciliations.inc({ provider: provider.name, outcome: 'unsupported' });
      if (deps.policy.inDoubtPolicy === 'dead') return { kind: 'unresolvable', provider: provider.name };
      continue;
    }
    try {
      const found = await provider.lookup(operationKey, claim.keeper.callContext(Math.max(100, claim.keeper.remainingMs() / 2)), target);
      if (found.found) {
        deps.metrics.reconciliations.inc({ provider: provider.name, outcome: 'found' });
        return { kind: 'found', provider: provider.name, externalId: found.externalId };
      }
      deps.metrics.reconciliations.inc({ provider: provider.name, outcome: 'not_found' });
      asked.push(provider.name);
    } catch (err) {
      deps.metrics.reconciliations.inc({ provider: provider.name, outcome: 'error' });
      return { kind: 'unknown', provider: provider.name, error: describeError(err) };
    }
  }
  return { kind: 'not_found', asked };
}
