import type { Redis } from 'ioredis';
import type { OperationStatus } from '@singleshot/core';
import type { KeyBuilder } from './keys';
import { runScript } from './scripts';

export type ClaimResult =
  | {
      kind: 'claimed';
      fence: string;
      /** Status before this claim: `sending` or `in_doubt` mean "reconcile before sending". */
      previousStatus: OperationStatus;
      attempts: number;
      lastProvider: string;
      /** A replay released this operation from a rate-limit suppression: skip the limit once. */
      limitBypass: boolean;
    }
  | { kind: 'duplicate'; provider: string; externalId: string; attempts: number }
  | { kind: 'terminal'; status: OperationStatus }
  | { kind: 'conflict'; retryInMs: number };

export type CommitOutcome = 'sent' | 'in_doubt' | 'failed' | 'dead' | 'suppressed' | 'released';

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

export interface CommitInput {
  operationKey: string;
  fence: string;
  outcome: CommitOutcome;
  messageKey: string;
  recipient: string;
  channel: string;
  provider?: string;
  externalId?: string;
  error?: { code: string; message: string };
  /** Why an operation is dead or suppressed. */
  reason?: string;
  /** With `released`: the status to leave behind. */
  releaseTo?: 'pending' | 'failed' | 'in_doubt';
  /** Provider attempts of this claim, appended to the operation's history. */
  history?: AttemptRecord | AttemptRecord[];
  /** When the next attempt is due (failed, in_doubt, released); the sweeper looks after that. Default now. */
  nextAttemptAt?: number;
}

export type CommitResult = { kind: 'ok'; journalId: string } | { kind: 'stale'; currentFence: string };

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
  sentAt?: number;
  leaseUntil?: number;
  /** How often an operator replayed it, and the last one who did. */
  replays: number;
  replayedBy?: string;
  replayedAt?: number;
  journalIds: string[];
}

export interface OperationStoreOptions {
  retentionMs: number;
  /** Journal duplicate claims (noisy under heavy redelivery, useful for audits). */
  journalDuplicates?: boolean;
  now?: () => number;
}

/**
 * Operation state, locks and fences: claim before send, fenced commit, lease
 * extension. Every check-and-set is one Lua script (DESIGN.md invariants 3, 4, 10).
 */
export class OperationStore {
  private readonly now: () => number;

  constructor(
    private readonly redis: Redis,
    private readonly keys: KeyBuilder,
    private readonly options: OperationStoreOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  async claim(input: {
    operationKey: string;
    messageKey: string;
    recipient: string;
    channel: string;
    owner: string;
    leaseMs: number;
    /** The deliver job, kept at the first claim so the sweeper can re-enqueue a lost job. */
    job?: object;
  }): Promise<ClaimResult> {
    const now = this.now();
    const k = this.keys;
    const raw = (await runScript(
      this.redis,
      'claim-4',
      [k.op(input.operationKey), k.lock(input.operationKey), k.journalOf(input.operationKey), k.activeIndexOf(input.operationKey)],
      [
        input.leaseMs,
        now,
        input.owner,
        input.messageKey,
        input.recipient,
        input.channel,
        this.options.retentionMs,
        now - this.options.retentionMs,
        this.options.journalDuplicates === false ? '0' : '1',
        input.operationKey,
        input.job ? JSON.stringify(input.job) : '',
      ],
    )) as [string, number | string, string, number | string, string, string, string];
    const [kind, n, status, attempts, provider, externalId, bypass] = raw;
    switch (kind) {
      case 'claimed':
        return {
          kind,
          fence: String(n),
          previousStatus: status as OperationStatus,
          attempts: Number(attempts),
          lastProvider: provider,
          limitBypass: bypass === '1',
        };
      case 'duplicate':
        return { kind, provider, externalId, attempts: Number(attempts) };
      case 'terminal':
        return { kind, status: status as OperationStatus };
      case 'conflict':
        return { kind, retryInMs: Math.max(1, Number(n)) };
      default:
        throw new Error(`claim script returned unknown result ${kind}`);
    }
  }

  async commit(input: CommitInput): Promise<CommitResult> {
    const now = this.now();
    const k = this.keys;
    const history = input.history === undefined ? [] : Array.isArray(input.history) ? input.history : [input.history];
    const [kind, value] = (await runScript(
      this.redis,
      'commit-6',
      [
        k.op(input.operationKey),
        k.lock(input.operationKey),
        k.journalOf(input.operationKey),
        k.history(input.operationKey),
        k.activeIndexOf(input.operationKey),
        k.suppressedIndexOf(input.operationKey),
      ],
      [
        input.fence,
        input.outcome,
        now,
        this.options.retentionMs,
        now - this.options.retentionMs,
        input.provider ?? '',
        input.externalId ?? '',
        input.error?.code ?? '',
        (input.error?.message ?? '').slice(0, 2000),
        history.length,
        input.messageKey,
        input.recipient,
        input.channel,
        input.reason ?? '',
        input.releaseTo ?? 'pending',
        input.operationKey,
        input.nextAttemptAt ?? '',
        ...history.map((entry) => JSON.stringify(entry)),
      ],
    )) as [string, string];
    if (kind === 'ok') return { kind, journalId: value };
    return { kind: 'stale', currentFence: value };
  }

  /** Extends the lease when the fence still holds. False: the lease is lost, stop. */
  async extend(operationKey: string, fence: string, leaseMs: number): Promise<boolean> {
    const result = await runScript(
      this.redis,
      'extend-lock-2',
      [this.keys.lock(operationKey), this.keys.op(operationKey)],
      [fence, leaseMs, this.now()],
    );
    return Number(result) === 1;
  }

  async get(operationKey: string): Promise<OperationRecord | null> {
    const h = await this.redis.hgetall(this.keys.op(operationKey));
    if (!h || Object.keys(h).length === 0) return null;
    const num = (v: string | undefined) => (v === undefined || v === '' ? undefined : Number(v));
    const str = (v: string | undefined) => (v === undefined || v === '' ? undefined : v);
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
      lastError: str(h.lastError),
      createdAt: num(h.createdAt),
      updatedAt: num(h.updatedAt),
      sentAt: num(h.sentAt),
      leaseUntil: num(h.leaseUntil),
      replays: Number(h.replays ?? 0),
      replayedBy: str(h.replayedBy),
      replayedAt: num(h.replayedAt),
      journalIds: h.journalIds ? h.journalIds.split(',') : [],
    };
  }

  async history(operationKey: string): Promise<AttemptRecord[]> {
    const items = await this.redis.lrange(this.keys.history(operationKey), 0, -1);
    return items.map((item) => JSON.parse(item) as AttemptRecord);
  }
}
