import { digestId } from '@singleshot/core';
import type { RedisClient } from './connection';
import { DigestRecords } from './digest-record';
import { DigestStore } from './digest-store';
import type { KeyBuilder } from './keys';
import { parseMessageDigest, parseTombstone, type MessageDigest, type Tombstone } from './message-store';
import { decimal } from './script-options';
import { runScript } from './scripts';

/**
 * What a cancel did to one operation (cancel-op.lua), or to a message's
 * place in a digest: `cancelled` when it is out of its open digest (or kept
 * out before it joined); `digest_closed` when its digest had closed, so it
 * goes with that digest's one message (the close fixed its items).
 */
export type CancelOutcome = 'cancelled' | 'in_flight' | 'already_cancelled' | 'already_sent' | 'already_dead' | 'already_suppressed' | 'digest_closed';

export const CANCEL_OUTCOMES: readonly CancelOutcome[] = ['cancelled', 'in_flight', 'already_cancelled', 'already_sent', 'already_dead', 'already_suppressed', 'digest_closed'];

/** One operation and what the cancel did to it. */
export interface CancelledOperation {
  /** For a digest member, its digest's flush operation ('' while the digest is open or not yet known). */
  operationKey: string;
  recipient: string;
  channel: string;
  outcome: CancelOutcome;
  /** Set for a message's place in a digest: the group's route and key, and the digest id once known. */
  digest?: { route: string; key: string; group: string; id?: string };
}

/** Who cancels, and why (journaled with each operation the cancel ends). */
export interface CancelBy {
  by: string;
  reason: string;
}

/** What cancelling one message found: its known operations, and whether some are still to come. */
export interface MessageCancel {
  operations: CancelledOperation[];
  /** The message is not decided yet: the operations it makes later are born cancelled. */
  pending: boolean;
  /** This was the message's first cancel. */
  first: boolean;
  /** The Redis keys the cancel wrote: what must be on a replica before the answer is definite. */
  written: string[];
}

/**
 * Cancels, as compare-and-sets on the same state the claim reads, so an
 * operation is either cancelled or sent, never both, and the answer says
 * which (docs/scheduling.md). A message is cancelled in its own slot first
 * (the tombstone a later decision reads), then each operation it fanned out
 * to in the operation's slot; a cancellation key first gathers its messages.
 */
export class Cancellations {
  private readonly digests: DigestStore;
  private readonly digestRecords: DigestRecords;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeyBuilder,
    private readonly options: { retentionMs: number; now?: () => number },
  ) {
    this.digests = new DigestStore(redis, keys, options);
    this.digestRecords = new DigestRecords(redis, keys, options);
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** Cancels one operation (recipient and channel may be '' when unknown). */
  async cancelOperation(op: { operationKey: string; messageKey: string; recipient: string; channel: string }, who: CancelBy): Promise<CancelledOperation> {
    const now = this.now();
    const k = this.keys;
    const [outcome, recipient, channel] = (await runScript(
      this.redis,
      'cancel-op',
      [k.op(op.operationKey), k.lock(op.operationKey), k.journalOf(op.operationKey), k.activeIndexOf(op.operationKey), k.scheduledIndexOf(op.operationKey), k.waitingIndexOf(op.operationKey), k.layoutOf(op.operationKey)],
      {
        now: decimal(now),
        operationKey: op.operationKey,
        messageKey: op.messageKey,
        recipient: op.recipient,
        channel: op.channel,
        reason: who.reason,
        by: who.by,
        retentionMs: decimal(this.options.retentionMs),
        journalMinId: decimal(now - this.options.retentionMs),
      },
    )) as [CancelOutcome, string, string];
    return { operationKey: op.operationKey, recipient, channel, outcome };
  }

  /**
   * Cancels a message, or some of its recipients (normalized): the tombstone
   * first, then every operation its decision recorded that the cancel covers.
   */
  async cancelMessage(messageKey: string, recipients: readonly string[] | undefined, who: CancelBy): Promise<MessageCancel> {
    const reply = (await runScript(this.redis, 'cancel-message', [this.keys.message(messageKey)], {
      now: decimal(this.now()),
      ...(recipients ? { recipients: [...recipients] } : {}),
      reason: who.reason,
      by: who.by,
      retentionMs: decimal(this.options.retentionMs),
    })) as [number, number, ...string[]];
    const [decided, first, ...pairs] = reply;
    const wanted = recipients ? new Set(recipients) : undefined;
    const targets: Array<{ operationKey: string; recipient: string; channel: string }> = [];
    const memberships: MessageDigest[] = [];
    for (let i = 0; i + 1 < pairs.length; i += 2) {
      const field = pairs[i] as string;
      if (field.startsWith('dg:')) {
        const m = parseMessageDigest(field.slice(3), pairs[i + 1] as string);
        if (!wanted || wanted.has(m.recipient)) memberships.push(m);
        continue;
      }
      const target = pairs[i + 1] as string;
      const colon = target.indexOf(':');
      const channel = colon < 0 ? '' : target.slice(0, colon);
      const recipient = colon < 0 ? '' : target.slice(colon + 1);
      // A recorded operation without a target ('' above) is cancelled by a cancel of all only.
      if (wanted && !wanted.has(recipient)) continue;
      targets.push({ operationKey: pairs[i] as string, recipient, channel });
    }
    const [operations, fromDigests] = await Promise.all([
      Promise.all(targets.map((t) => this.cancelOperation({ ...t, messageKey }, who))),
      Promise.all(memberships.map((m) => this.leaveDigest(messageKey, m))),
    ]);
    const written = [this.keys.message(messageKey), ...targets.map((t) => this.keys.op(t.operationKey)), ...memberships.map((m) => this.keys.digestMember(m.group, messageKey))];
    return { operations: [...operations, ...fromDigests], pending: decided !== 1, first: first === 1, written };
  }

  /**
   * Takes a message out of its digest of group `m` (digest-remove.lua);
   * when that digest has closed, the answer is its flush operation's: sent,
   * dead, suppressed, cancelled, or still to go (`digest_closed`).
   */
  private async leaveDigest(messageKey: string, m: MessageDigest): Promise<CancelledOperation> {
    const removal = await this.digests.remove(m.group, messageKey);
    const base = { recipient: m.recipient, channel: m.channel, digest: { route: m.route, key: m.key, group: m.group } };
    if (removal.outcome === 'kept_out') return { ...base, operationKey: '', outcome: 'cancelled' };
    const id = removal.seq === undefined ? undefined : digestId(m.group, removal.seq);
    const digest = id === undefined ? base.digest : { ...base.digest, id };
    if (removal.outcome === 'removed') return { ...base, digest, operationKey: '', outcome: 'cancelled' };
    if (removal.outcome === 'already_removed') return { ...base, digest, operationKey: '', outcome: 'already_cancelled' };
    const record = id === undefined ? null : await this.digestRecords.read(id);
    if (!record || record.state !== 'flush') return { ...base, digest, operationKey: '', outcome: 'digest_closed' };
    const status = await this.redis.hget(this.keys.op(record.operationKey), 'status');
    const ended = status === 'sent' || status === 'dead' || status === 'suppressed' || status === 'cancelled' ? (`already_${status}` as const) : undefined;
    return { ...base, digest, operationKey: record.operationKey, outcome: ended ?? 'digest_closed' };
  }

  /**
   * Cancels every message of `source` that carries `cancellationKey` (and
   * every later one, for the retention period); `tenant`'s own key of that
   * name, when given (core tenant.ts).
   */
  async cancelByKey(source: string, cancellationKey: string, recipients: readonly string[] | undefined, who: CancelBy, tenant?: string): Promise<MessageCancel> {
    const key = this.keys.cancellationKey(source, cancellationKey, tenant);
    const [first, ...members] = (await runScript(this.redis, 'cancel-key', [key], {
      mode: 'cancel',
      now: decimal(this.now()),
      ...(recipients ? { recipients: [...recipients] } : {}),
      reason: who.reason,
      by: who.by,
      retentionMs: decimal(this.options.retentionMs),
    })) as [number, ...string[]];
    const each = await Promise.all(members.map((m) => this.cancelMessage(m, recipients, who)));
    return {
      operations: each.flatMap((c) => c.operations),
      // No message yet, or one not decided yet: later operations are born cancelled.
      pending: members.length === 0 || each.some((c) => c.pending),
      first: first === 1,
      written: [key, ...each.flatMap((c) => c.written)],
    };
  }

  /**
   * A message that carries a cancellation key joins it (at its decision,
   * before it fans out); the key's tombstone comes back when it was cancelled
   * first. `extraRetentionMs` keeps the key until the message's scheduled
   * operations are due. `tenant`: the message's tenant, whose own key it joins.
   */
  async joinKey(
    source: string,
    cancellationKey: string,
    messageKey: string,
    extraRetentionMs = 0,
    tenant?: string,
  ): Promise<{ cancelled: Tombstone; reason: string; by: string } | undefined> {
    const [stored, reason, by] = (await runScript(this.redis, 'cancel-key', [this.keys.cancellationKey(source, cancellationKey, tenant)], {
      mode: 'join',
      now: decimal(this.now()),
      messageKey,
      retentionMs: decimal(this.options.retentionMs + Math.max(0, extraRetentionMs)),
    })) as [string | null, string, string];
    return stored ? { cancelled: parseTombstone(stored), reason, by } : undefined;
  }
}

