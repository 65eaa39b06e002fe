/**
 * The provider fallback chain of a channel, as a plan for one attempt of one
 * operation. Pure: it reads the operation's attempt history (kept by the
 * store) and returns which providers to try, in which order.
 *
 * Rules (docs/protocol.md invariant 5, docs/contract.md "Outbound HTTP provider"):
 * - Providers are tried in configured order. The next one is used only after
 *   a definite failure of the one before: refused before the request was
 *   written (at once), or 5xx/429 once that provider's retry budget for this
 *   operation is spent. The budget (`perProviderAttempts`) counts failed and
 *   in-doubt calls to that provider since the last replay.
 * - An in-doubt call is never followed by another provider while it is
 *   unresolved. It is resolved when a lookup said the provider does not have
 *   the message (a `reconcile` record); a provider without lookup can never
 *   say so, so the operation stays on that provider ("pinned"): a resend there
 *   carries the same idempotency key / Message-ID, a copy through another
 *   provider would carry nothing the recipient could dedup on.
 * - When every provider has spent its budget, the chain starts over from the
 *   first; the operation's overall `attempts` ends it in the DLQ.
 */

/** The fields of an attempt record the plan reads (see @singleshot/store AttemptRecord). */
export interface ChainHistoryEntry {
  provider?: string;
  outcome: string;
  step?: string;
}

export interface ChainPlanInput {
  /** Provider names of the channel, in configured order. */
  providers: readonly string[];
  /** The operation's attempt history, oldest first. */
  history: readonly ChainHistoryEntry[];
  /** Calls per provider within one operation before falling back (>= 1). */
  perProviderAttempts: number;
}

export interface ChainPlan {
  /** Providers to try in this attempt, in order; the next one only after a definite failure. */
  order: string[];
  /** Set when an unresolved in-doubt call ties the operation to one provider. */
  pinnedTo?: string;
  /** Failed or in-doubt calls per provider since the last replay. */
  used: Record<string, number>;
}

/** The history that counts: everything after the last replay (a replay grants a fresh budget). */
export function sinceLastReplay<T extends ChainHistoryEntry>(history: readonly T[]): T[] {
  for (let i = history.length - 1; i >= 0; i--) {
    if (history[i]?.step === 'replay') return history.slice(i + 1);
  }
  return [...history];
}

function isProviderCall(entry: ChainHistoryEntry): boolean {
  return entry.step === undefined || entry.step === 'send';
}

export function planChain(input: ChainPlanInput): ChainPlan {
  const budget = Math.max(1, Math.floor(input.perProviderAttempts));
  const history = sinceLastReplay(input.history);
  const used: Record<string, number> = Object.fromEntries(input.providers.map((p) => [p, 0]));
  // Providers with an unresolved in-doubt call, most recent last.
  const unresolved: string[] = [];
  for (const entry of history) {
    if (!entry.provider) continue;
    if (isProviderCall(entry) && (entry.outcome === 'failed' || entry.outcome === 'in_doubt')) {
      used[entry.provider] = (used[entry.provider] ?? 0) + 1;
    }
    const resolvedBy = entry.step === 'reconcile' && entry.outcome === 'failed';
    if ((isProviderCall(entry) && entry.outcome === 'in_doubt') || resolvedBy) {
      const at = unresolved.indexOf(entry.provider);
      if (at >= 0) unresolved.splice(at, 1);
      // A lookup that said "not there" resolves every earlier doubt about that provider.
      if (!resolvedBy) unresolved.push(entry.provider);
    }
  }
  const pinned = unresolved.filter((p) => input.providers.includes(p)).pop();
  if (pinned) return { order: [pinned], pinnedTo: pinned, used };
  const fresh = input.providers.filter((p) => (used[p] ?? 0) < budget);
  return { order: fresh.length > 0 ? fresh : [...input.providers], used };
}

/** True when a retryable, not-safe failure (5xx, 429) has spent the provider's budget. */
export function budgetSpent(plan: ChainPlan, provider: string, perProviderAttempts: number): boolean {
  return (plan.used[provider] ?? 0) >= Math.max(1, Math.floor(perProviderAttempts));
}
