import type { CommitOutcome, OperationStatus, WaitMark } from '@singleshot/core';

// The operation's data as the store hands it out: the state hash (`KeyBuilder.op`),
// its large values (`KeyBuilder.opData`: the stored job, the last error's text) and
// the history list (`KeyBuilder.history`). Only the store reads or writes their
// fields (docs/architecture.md, "Key layout"); everybody else gets these types.


/**
 * What an attempt record stands for: a provider call (`send`), a reconciliation
 * lookup, a provider skipped by its open circuit breaker, a rate-limit
 * suppression, or an operator's replay. Records without one predate the field
 * and are provider calls.
 */
export type AttemptStep = 'send' | 'reconcile' | 'breaker_skip' | 'rate_limit' | 'replay';

/** One provider attempt, as kept in the operation's history. */
export interface AttemptRecord {
  at: number;
  attempt: number;
  fence: string;
  outcome: CommitOutcome | 'stale' | 'replayed';
  step?: AttemptStep;
  /** Who replayed (step `replay`), and through what (cli, api, dashboard). */
  by?: string;
  via?: string;
  provider?: string;
  externalId?: string;
  errorCode?: string;
  error?: string;
  durationMs?: number;
  note?: string;
}

/** The operation state hash, decoded. */
export interface OperationRecord {
  operationKey: string;
  status: OperationStatus;
  fence: string;
  attempts: number;
  messageKey?: string;
  recipient?: string;
  channel?: string;
  provider?: string;
  externalId?: string;
  owner?: string;
  reason?: string;
  lastErrorCode?: string;
  lastError?: string;
  createdAt?: number;
  updatedAt?: number;
  /**
   * When it was sent. Not stored, to save memory: a sent operation is terminal
   * and never written again, so it is the `updatedAt` of a `sent` operation
   * (a record that has a `sentAt` of its own is read first).
   */
  sentAt?: number;
  /** Until when the current claim holds the lease; gone once the operation is terminal. */
  leaseUntil?: number;
  /** How often an operator replayed it, and the last one who did. */
  replays: number;
  replayedBy?: string;
  replayedAt?: number;
  /**
   * Set while it waits without a lock (include/wait.lua; the claim that goes or a cancel
   * clears it): why (a `WaitMark`), since when, and until when it is looked at again.
   */
  waitingReason?: WaitMark;
  waitingSince?: number;
  waitingUntil?: number;
  /** A wait for a document: what (e.g. `document:purchase-order`) and the document's key. */
  waitingFor?: string;
  waitingKey?: string;
  /** A `scheduled` operation: when it is due (ms), and why it waits (`send_at`, `delay`); gone once claimed. */
  scheduledFor?: number;
  scheduleReason?: string;
  /**
   * A cancel came while an attempt was in flight (ms): the holder's commit or
   * the next claim ends it sent or cancelled, never sent anew.
   */
  cancelRequested?: number;
  /** Why and by whom it was cancelled (also while `cancelRequested`). */
  cancelReason?: string;
  cancelledBy?: string;
  journalIds: string[];
}

/** What the recovery sweeper needs to know of an overdue operation. */
export interface OperationProbe {
  operationKey: string;
  /** Undefined: no state any more (past retention). */
  status?: OperationStatus;
  /** The deliver job kept at the first claim, as parsed JSON; undefined when none or unreadable. */
  job?: unknown;
  /** Ms left on the operation's lock; 0 or less: nobody holds it. */
  lockTtlMs: number;
}

/** The fields a list of operations shows (the suppressed list). */
export type OperationSummary = Pick<OperationRecord, 'operationKey' | 'recipient' | 'channel' | 'reason' | 'lastError'> & {
  status?: OperationStatus;
};

const num = (v: string | undefined) => (v === undefined || v === '' ? undefined : Number(v));
const str = (v: string | undefined | null) => (v === undefined || v === null || v === '' ? undefined : v);

/**
 * Decodes the state hash (HGETALL's reply) with the last error's text from the
 * data hash (`lastError`: null or absent when there is none); null when the
 * operation has no state.
 */
export function decodeOperation(operationKey: string, h: Record<string, string>, lastError?: string | null): OperationRecord | null {
  if (Object.keys(h).length === 0) return null;
  return {
    operationKey,
    status: (h.status ?? 'pending') as OperationStatus,
    fence: h.fence ?? '0',
    attempts: Number(h.attempts ?? 0),
    messageKey: str(h.messageKey),
    recipient: str(h.recipient),
    channel: str(h.channel),
    provider: str(h.provider),
    externalId: str(h.externalId),
    owner: str(h.owner),
    reason: str(h.reason),
    lastErrorCode: str(h.lastErrorCode),
    lastError: str(lastError),
    createdAt: num(h.createdAt),
    updatedAt: num(h.updatedAt),
    sentAt: num(h.sentAt) ?? (h.status === 'sent' ? num(h.updatedAt) : undefined),
    leaseUntil: num(h.leaseUntil),
    replays: Number(h.replays ?? 0),
    replayedBy: str(h.replayedBy),
    replayedAt: num(h.replayedAt),
    waitingFor: str(h.waitingFor),
    waitingKey: str(h.waitingKey),
    waitingSince: num(h.waitingSince),
    waitingReason: str(h.waitingReason) as WaitMark | undefined,
    waitingUntil: num(h.waitingUntil),
    scheduledFor: num(h.scheduledFor),
    scheduleReason: str(h.scheduleReason),
    cancelRequested: num(h.cancelRequested),
    // The producer's reason may be empty: only who cancelled says a cancel happened.
    cancelReason: h.cancelledBy === undefined ? undefined : (h.cancelReason ?? ''),
    cancelledBy: str(h.cancelledBy),
    journalIds: h.journalIds ? h.journalIds.split(',') : [],
  };
}

/** The stored deliver job (field `job`), parsed; undefined when absent or not JSON. */
export function decodeStoredJob(raw: string | null | undefined): unknown {
  if (!raw) return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Decodes HMGET of SUMMARY_FIELDS on the state hash, with the last error's text
 * from the data hash (`lastError`).
 */
export function decodeSummary(operationKey: string, fields: (string | null)[], dataLastError?: string | null): OperationSummary {
  const [status, recipient, channel, reason] = fields;
  const lastError = str(dataLastError);
  return {
    operationKey,
    ...(str(status) ? { status: status as OperationStatus } : {}),
    ...(str(recipient) ? { recipient: recipient as string } : {}),
    ...(str(channel) ? { channel: channel as string } : {}),
    ...(str(reason) ? { reason: reason as string } : {}),
    ...(lastError ? { lastError } : {}),
  };
}

/** The HMGET field list `decodeSummary` reads from the state hash, in its order. */
export const SUMMARY_FIELDS = ['status', 'recipient', 'channel', 'reason'] as const;
