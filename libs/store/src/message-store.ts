import { DEFAULT_TENANT } from '@singleshot/core';
import type { RedisClient } from './connection';
import type { KeyBuilder } from './keys';
import { decimal } from './script-options';
import { ScriptBatch } from './script-batch';

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
  /** The tenant whose producer key posted it (core tenant.ts); `default` when none did. */
  tenant: string;
  firstArrivalAt?: number;
  lastArrivalAt?: number;
  firstVia?: string;
  arrivals: number;
  via: Record<string, number>;
  /** The first arrival through each channel (ms), where the record has it (records of this version on). */
  viaFirstAt: Record<string, number>;
  queuedAt?: number;
  decidedAt?: number;
  /** The first decision's W3C traceparent, when it was traced. */
  trace?: string;
  operations: string[];
  /** The digest groups its decision joined it to (route, recipient, rendered key). */
  digests: MessageDigest[];
  /** The message's cancel tombstone (`POST /v1/cancellations`), when it has one. */
  cancelled?: { recipients: Tombstone; at: number; reason: string; by: string };
}

/** A digest group a message's decision joined it to (the record's `dg:<group>` field). */
export interface MessageDigest {
  group: string;
  route: string;
  recipient: string;
  key: string;
  /** The channel its digest goes by. */
  channel: string;
}

/** A `dg:<group>` field's value (JSON [route, recipient, key, channel]) as a membership. */
export function parseMessageDigest(group: string, value: string): MessageDigest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    parsed = [];
  }
  const [route, recipient, key, channel] = Array.isArray(parsed) ? parsed.map(String) : [];
  return { group, route: route ?? '', recipient: recipient ?? '', key: key ?? '', channel: channel ?? '' };
}

/** What recording a decision found. */
export interface DecisionRecord {
  /** The first decision of this message (a redelivered decide job gets false). */
  first: boolean;
  /** A cancel came first: every recipient (`'*'`) or these. */
  cancelled?: Tombstone;
  /** Who cancelled first, and why (journaled with each operation born cancelled). */
  cancelledBy?: { by: string; reason: string };
}

/** The recipients a cancel covers: all of them, or these (normalized). */
export type Tombstone = '*' | string[];

/** A tombstone as the scripts store it ('*' or a JSON array). */
export function parseTombstone(stored: string): Tombstone {
  if (stored === '*') return '*';
  const list = JSON.parse(stored) as unknown;
  return Array.isArray(list) ? list.map(String) : '*';
}

/** Whether a tombstone covers a (normalized) recipient. */
export function tombstoneCovers(tombstone: Tombstone, recipient: string): boolean {
  return tombstone === '*' || tombstone.includes(recipient);
}

/**
 * Message records: the ingest-side dedup state of one message key. Kept for the
 * retention period, far longer than BullMQ keeps a job (docs/protocol.md invariant 8: a removed
 * job's id is free again, so job retention is not dedup).
 */
export class MessageStore {
  /** The arrivals, and the decisions, recorded in one turn go to Redis in one script call each (script-batch.ts). */
  private readonly arrivals: ScriptBatch<'message-arrive'>;
  private readonly decisions: ScriptBatch<'message-decided'>;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeyBuilder,
    private readonly options: { retentionMs: number; now?: () => number },
  ) {
    this.arrivals = new ScriptBatch(redis, 'message-arrive');
    this.decisions = new ScriptBatch(redis, 'message-decided');
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** One arrival of a message; `tenant` (not the default one) is kept with its first arrival. */
  async arrive(messageKey: string, via: string, tenant?: string): Promise<ArrivalResult> {
    const options = { now: decimal(this.now()), via, retentionMs: decimal(this.options.retentionMs) };
    const [first, queued, firstArrivalAt, arrivals] = (await this.arrivals.run(this.keys.layoutOf(messageKey), {
      keys: [this.keys.message(messageKey)],
      options: tenant === undefined || tenant === DEFAULT_TENANT ? options : { ...options, tenant },
    })) as [number, number, string, number];
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
   * Records the decision: the operations it fanned out to (and, traced, the
   * decision's traceparent). True only for the first decision of this
   * message; a redelivered decide job gets false.
   *
   * Each operation key is a field of the message record (value empty): an
   * operation key is 64 hex digits, which fits the compact (listpack) hash
   * encoding's 64-byte limit, and fields of the record cost far less memory
   * than a set of their own per message. A redelivered decision adds the same
   * fields again: a union, as a set's SADD would be.
   */
  async markDecided(messageKey: string, operationKeys: string[], trace?: string): Promise<boolean> {
    return (await this.recordDecision(messageKey, operationKeys.map((operationKey) => ({ operationKey, target: '' })), 0, trace)).first;
  }

  /**
   * Records the decision before any of its operations is enqueued, and says
   * whether the message was cancelled (message-decided.lua): the cancel's
   * tombstone, `'*'` for every recipient or the cancelled recipients, when a
   * cancel came first. `target` is `channel:recipient`, what a later cancel
   * of some recipients matches on. `digests` are the digest groups the
   * message is about to join: a later cancel takes it out of those.
   */
  async recordDecision(
    messageKey: string,
    operations: ReadonlyArray<{ operationKey: string; target: string }>,
    extraRetentionMs = 0,
    trace?: string,
    digests: readonly MessageDigest[] = [],
  ): Promise<DecisionRecord> {
    const [first, cancelled, by, reason] = (await this.decisions.run(this.keys.layoutOf(messageKey), {
      keys: [this.keys.message(messageKey)],
      options: {
        now: decimal(this.now()),
        operationKeys: operations.map((o) => o.operationKey),
        targets: operations.map((o) => o.target),
        ...(digests.length > 0 ? { digestGroups: digests.map((d) => d.group), digestTargets: digests.map((d) => JSON.stringify([d.route, d.recipient, d.key, d.channel])) } : {}),
        // A message whose operations are scheduled stays cancellable until they are due, and the retention past that.
        retentionMs: decimal(this.options.retentionMs + Math.max(0, extraRetentionMs)),
        ...(trace === undefined ? {} : { trace }),
      },
    })) as [number, string | null, string, string];
    return { first: first === 1, ...(cancelled ? { cancelled: parseTombstone(cancelled), cancelledBy: { by, reason } } : {}) };
  }

  /**
   * The tenant of a message that arrived (`default` when its key had none);
   * undefined when none arrived, a cancel's tombstone alone included.
   */
  async tenantOf(messageKey: string): Promise<string | undefined> {
    const [firstArrivalAt, tenant] = await this.redis.hmget(this.keys.message(messageKey), 'firstArrivalAt', 'tenant');
    return firstArrivalAt === null || firstArrivalAt === undefined ? undefined : (tenant ?? DEFAULT_TENANT);
  }

  async get(messageKey: string): Promise<MessageRecord | null> {
    const h = await this.redis.hgetall(this.keys.message(messageKey));
    if (!h || Object.keys(h).length === 0) return null;
    const via: Record<string, number> = {};
    const viaFirstAt: Record<string, number> = {};
    const operations = new Set<string>();
    const digests: MessageDigest[] = [];
    for (const [field, value] of Object.entries(h)) {
      if (field.startsWith('via:')) via[field.slice(4)] = Number(value);
      else if (field.startsWith('dg:')) digests.push(parseMessageDigest(field.slice(3), value));
      else if (field.startsWith('at:')) viaFirstAt[field.slice(3)] = Number(value);
      else if (isOperationField(field)) operations.add(field);
    }
    const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));
    return {
      messageKey,
      tenant: h.tenant ?? DEFAULT_TENANT,
      firstArrivalAt: num(h.firstArrivalAt),
      lastArrivalAt: num(h.lastArrivalAt),
      firstVia: h.firstVia,
      arrivals: Number(h.arrivals ?? 0),
      via,
      viaFirstAt,
      queuedAt: num(h.queuedAt),
      decidedAt: num(h.decidedAt),
      ...(h.trace ? { trace: h.trace } : {}),
      operations: [...operations].sort(),
      digests,
      ...(h.cancelRecipients
        ? { cancelled: { recipients: parseTombstone(h.cancelRecipients), at: Number(h.cancelledAt ?? 0), reason: h.cancelReason ?? '', by: h.cancelledBy ?? '' } }
        : {}),
    };
  }
}

/** An operation key (sha256, 64 hex digits: docs/protocol.md, "Names"); no named field of the record looks like one. */
function isOperationField(field: string): boolean {
  return field.length === 64 && /^[0-9a-f]{64}$/.test(field);
}
