import type { RedisClient } from './connection';
import type { KeyBuilder } from './keys';
import { runScript } from './scripts';

export interface ArrivalResult {
  /** This arrival is the message's first. */
  first: boolean;
  /** A decide job was already recorded as queued for this message. */
  queued: boolean;
  firstArrivalAt: number;
  arrivals: number;
}

export interface MessageRecord {
  messageKey: string;
  firstArrivalAt?: number;
  lastArrivalAt?: number;
  firstVia?: string;
  arrivals: number;
  via: Record<string, number>;
  queuedAt?: number;
  decidedAt?: number;
  operations: string[];
}

/**
 * Message records: the ingest-side dedup state of one message key. Kept for the
 * retention period, far longer than BullMQ keeps a job (docs/protocol.md invariant 8: a removed
 * job's id is free again, so job retention is not dedup).
 */
export class MessageStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeyBuilder,
    private readonly options: { retentionMs: number; now?: () => number },
  ) {}

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  async arrive(messageKey: string, via: string): Promise<ArrivalResult> {
    const [first, queued, firstArrivalAt, arrivals] = (await runScript(
      this.redis,
      'message-arrive-1',
      [this.keys.message(messageKey)],
      { now: this.now(), via, retentionMs: this.options.retentionMs },
    )) as [number, number, string, number];
    return { first: first === 1, queued: queued === 1, firstArrivalAt: Number(firstArrivalAt), arrivals: Number(arrivals) };
  }

  /**
   * Marks the decide job as durably queued. True for exactly one caller: the
   * arrival that answers `accepted`; every other answers `duplicate`.
   */
  async markQueued(messageKey: string): Promise<boolean> {
    return (await this.redis.hsetnx(this.keys.message(messageKey), 'queuedAt', this.now())) === 1;
  }

  /**
   * Records the decision: the operations it fanned out to. True only for the
   * first decision of this message; a redelivered decide job gets false.
   */
  async markDecided(messageKey: string, operationKeys: string[]): Promise<boolean> {
    const key = this.keys.message(messageKey);
    const opsKey = this.keys.messageOps(messageKey);
    const tx = this.redis.multi().hsetnx(key, 'decidedAt', this.now());
    if (operationKeys.length > 0) tx.sadd(opsKey, ...operationKeys).pexpire(opsKey, this.options.retentionMs);
    const results = await tx.exec();
    const first = results?.[0]?.[1];
    return first === 1;
  }

  async get(messageKey: string): Promise<MessageRecord | null> {
    const [h, ops] = await Promise.all([
      this.redis.hgetall(this.keys.message(messageKey)),
      this.redis.smembers(this.keys.messageOps(messageKey)),
    ]);
    if (!h || Object.keys(h).length === 0) return null;
    const via: Record<string, number> = {};
    for (const [field, value] of Object.entries(h)) {
      if (field.startsWith('via:')) via[field.slice(4)] = Number(value);
    }
    const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));
    return {
      messageKey,
      firstArrivalAt: num(h.firstArrivalAt),
      lastArrivalAt: num(h.lastArrivalAt),
      firstVia: h.firstVia,
      arrivals: Number(h.arrivals ?? 0),
      via,
      queuedAt: num(h.queuedAt),
      decidedAt: num(h.decidedAt),
      operations: ops.sort(),
    };
  }
}
