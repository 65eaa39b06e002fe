import type { BreakerPermit, CircuitBreaker } from '@singleshot/providers';
import type { DeliverDeps } from './deliver-types';

/** A half-open breaker's one trial, taken before the claim and handed to the provider chain. */
export interface ReservedTrial {
  provider: string;
  breaker: CircuitBreaker;
  permit: BreakerPermit & { allowed: true };
  /** Set once the chain used it; an unused trial is handed back (`abandoned`). */
  used: boolean;
}

export type Gate = { kind: 'wait'; delayMs: number } | { kind: 'go'; trial?: ReservedTrial };

/**
 * Asked before an operation is claimed: may any provider of the channel be
 * called now? The first provider (in chain order) whose breaker is closed lets
 * the attempt go; a half-open one lets it go only if this attempt takes its
 * single trial, here, before the claim. Otherwise (open, or a trial already in
 * flight) the claim is told to hold it (hold.ts): waiting at a breaker never uses
 * up an attempt, and only the half-open trial claims (a claim is an attempt).
 */
export function passBreakers(channel: string, deps: Pick<DeliverDeps, 'breakers' | 'providers'>): Gate {
  if (!deps.breakers) return { kind: 'go' };
  const chain = deps.providers(channel);
  if (chain.length === 0) return { kind: 'go' };
  let soonest = Infinity;
  for (const provider of chain) {
    const breaker = deps.breakers.get(channel, provider.name);
    const state = breaker.state();
    if (state === 'closed') return { kind: 'go' };
    if (state === 'half_open') {
      const permit = breaker.acquire();
      if (permit.allowed) return { kind: 'go', trial: { provider: provider.name, breaker, permit, used: false } };
      soonest = Math.min(soonest, permit.retryInMs);
      continue;
    }
    soonest = Math.min(soonest, breaker.openForMs());
  }
  return { kind: 'wait', delayMs: Math.max(1, soonest) };
}

/** Hands an unused trial back, so the next waiting attempt may take it. */
export function returnTrial(trial: ReservedTrial | undefined): void {
  if (!trial || trial.used) return;
  trial.used = true;
  trial.breaker.record('abandoned', trial.permit);
}
