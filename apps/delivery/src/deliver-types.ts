import type { AnyErrorCode, DeadReason, SuppressReason, Verdict, WaitMark } from '@singleshot/core';
import type { DocumentStateStore, OperationStore, RateLimiter } from '@singleshot/store';
import type { DocumentStore } from '@singleshot/documents';
import type { DeadJobData } from '@singleshot/queues';
import type { BreakerRegistry, Provider } from '@singleshot/providers';
import type { DeliveryConfig, RateLimitConfig } from '@singleshot/config';
import type { Logger, Metrics, ScopedLogger, TenantMetrics } from '@singleshot/observability';
import type { UnsubscribeLinks } from '@singleshot/runtime';
import type { LeaseKeeper } from './lease-keeper';

// The types the delivery modules share. They live apart from the orchestrator
// (deliver.ts) so the deciding modules and the ending owner can use them
// without importing it: the modules of apps/delivery form no cycle.

/** Per-recipient limits as delivery reads them before the claim (limits.ts). */
export interface RecipientLimits {
  limiter: Pick<RateLimiter, 'admit' | 'settle'>;
  /** `limits.perRecipient`: across every route and channel. */
  perRecipient?: RateLimitConfig;
  /** A route's own `limit`, looked up by the route name the deliver job carries. */
  route(name: string): RateLimitConfig | undefined;
}

/** What delivery needs for operations with documents. */
export interface DocumentDeps {
  state: Pick<DocumentStateStore, 'statuses'>;
  store: Pick<DocumentStore, 'get'>;
  /** Larger documents go out as links. */
  maxAttachmentBytes: number;
  /** How long a waiting delivery sleeps before it looks again (the render wakes it sooner). */
  waitPollMs: number;
  /** A time-limited signed link to a stored document. */
  link(storeKey: string): Promise<{ url: string; expiresAt: string }>;
}

/** What the deliver handler needs; tests pass small object literals. */
export interface DeliverDeps {
  operations: Pick<OperationStore, 'claim' | 'commit' | 'extend' | 'history' | 'get'>;
  /** The ordered provider chain of a channel. */
  providers(channel: string): Provider[];
  addDead(record: DeadJobData): Promise<void>;
  policy: Pick<DeliveryConfig, 'leaseMs' | 'attempts' | 'backoffMs' | 'backoffCapMs' | 'inDoubtPolicy' | 'providerAttempts'>;
  /** Circuit breakers per channel and provider (this process's view); none: every provider is always tried. */
  breakers?: Pick<BreakerRegistry, 'get'>;
  /** Per-recipient limits; none: no limit. */
  limits?: RecipientLimits;
  /** Documents; none: an operation that needs one ends dead (`document_failed`), never sent without it. */
  documents?: DocumentDeps;
  workerId: string;
  logger: Logger;
  metrics: Pick<
    Metrics,
    | 'deliveries'
    | 'deliveryDuration'
    | 'endToEnd'
    | 'duplicatesSuppressed'
    | 'lockConflicts'
    | 'staleCommits'
    | 'inDoubt'
    | 'reconciliations'
    | 'dead'
    | 'suppressed'
    | 'fallbackSwitches'
  >;
  /** Sends counted per tenant (docs/tenants.md); none: not counted. */
  tenants?: Pick<TenantMetrics, 'sent'>;
  /** Records that an operation waits without a claim (`ops show`, `singleshot_operations_waiting`). */
  waiting?: WaitingPort;
  /** One-click unsubscribe links for email of routes with a category (`unsubscribe.publicBaseUrl`); none: no header. */
  unsubscribe?: Pick<UnsubscribeLinks, 'link'>;
  /** Aborted on shutdown: a claim not yet sent is released instead of sent. */
  shutdown?: AbortSignal;
  now?: () => number;
  random?: () => number;
}

/** Where this process counts the waits the claim marked (the gauge); the mark itself is in the operation's state. */
export interface WaitingPort {
  note(operationKey: string, reason: WaitMark, untilMs: number): void;
}

/**
 * What one call of the deliver handler came to: the claim's verdict when it
 * was not `go` (a wait, a conflict, an operation ended before or by the
 * claim), or how the attempt it allowed ended: `ended` (sent, dead,
 * suppressed, cancelled), `retry`, or `stale` (this holder lost its lease and
 * wrote nothing). The worker hands `wait`, `conflict` and `retry` back to the
 * queue after `delayMs`.
 */
export type DeliverOutcome =
  | (Omit<Extract<Verdict, { kind: 'wait' }>, 'untilMs'> & { delayMs: number; waitingFor?: string })
  | { kind: 'conflict'; delayMs: number }
  | { kind: 'retry'; delayMs: number; reason: string }
  | (Extract<Verdict, { kind: 'ended' }> & { reconciled?: boolean })
  | { kind: 'stale' };

/** The name an outcome is counted under (a batch's `outcomes`): a terminal status this call reached, `duplicate` or `terminal` for one it found, else its kind. */
export function outcomeLabel(outcome: DeliverOutcome): string {
  if (outcome.kind !== 'ended') return outcome.kind;
  if (outcome.endedNow) return outcome.status;
  return outcome.status === 'sent' ? 'duplicate' : 'terminal';
}

/** The state a successful claim hands the attempt: the `go` verdict, and what keeps and logs its lease. */
export type ClaimState = Omit<Extract<Verdict, { kind: 'go' }>, 'kind'> & {
  keeper: LeaseKeeper;
  log: ScopedLogger;
};

export interface ErrorInfo {
  code: AnyErrorCode;
  message: string;
}

/**
 * How a claimed attempt ends, as the deciding modules (reconcile verdicts,
 * the provider chain) decide it. They never commit or count: the
 * ending owner (`finish` in ending.ts) turns a decision into the fenced
 * commit, the metric sample, the DLQ record and the log line, so each
 * ending is counted exactly once.
 *
 * - `retry`: try again later; `status` is what the operation is left as
 *   (`in_doubt` after a failed reconciliation: the doubt is not resolved).
 * - `in_doubt`: a provider call whose outcome is unknown (see docs/protocol.md, invariant 5).
 * - `released`: handed back before any provider call in this claim; the
 *   claim's attempt is refunded (only calls that may have reached a provider count).
 * - `stale`: this holder lost its lease; it writes nothing.
 * `retry` and `in_doubt` become `dead` when the attempt was the last one.
 */
export type Ending =
  | { kind: 'sent'; provider: string; externalId: string; reconciled: boolean }
  | { kind: 'retry'; status: 'failed' | 'in_doubt'; reason: string; error: ErrorInfo; provider: string; retryAfterMs?: number }
  | { kind: 'in_doubt'; reason: string; error: ErrorInfo; provider: string }
  | { kind: 'dead'; reason: DeadReason; error: ErrorInfo; provider?: string }
  | { kind: 'suppressed'; reason: SuppressReason; error: ErrorInfo; details?: Record<string, unknown> }
  | { kind: 'released'; reason: string; provider?: string; delayMs?: number }
  /** A cancel asked for during an earlier attempt, which sent nothing for sure: ends `cancelled`. */
  | { kind: 'cancelled'; reason: string }
  | { kind: 'stale' };

/** The `result` label of `singleshot_deliveries_total`: one sample per ending of a claimed attempt. */
export type DeliveryResult = Ending['kind'];
