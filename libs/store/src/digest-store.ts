import { digestId } from '@singleshot/core';
import type { RedisClient } from './connection';
import type { KeyBuilder } from './keys';
import { decimal } from './script-options';
import { runScript } from './scripts';

/** Why a digest closed. */
export type DigestCloseReason = 'window' | 'max_items' | 'bytes';

/** What a join did (digest-join.lua). */
export interface DigestJoin {
  /**
   * `duplicate`: the message joined this group before (a redelivery, another
   * channel); `cancelled`: a cancel took it out or kept it out (seq 0).
   */
  status: 'joined' | 'duplicate' | 'cancelled';
  /** The digest the message is in. */
  seq: number;
  /** That digest's state: open, closed (flush not yet enqueued) or flushed; `removed` with status cancelled. */
  state: 'open' | 'closed' | 'flushed' | 'removed';
  /** This join opened it (its close job is to be added). */
  opened: boolean;
  /** Its close time while open. */
  closeAt?: number;
  /** Digests this join closed, to be flushed. */
  closed: Array<{ seq: number; reason: DigestCloseReason }>;
}

/** A closed digest as its flush needs it. */
export interface ClosedDigest {
  reason: DigestCloseReason;
  openedAt: number;
  closeAt: number;
  closedAt: number;
  /** The items' JSON, in join order (members removed before the close left out). */
  items: string[];
}

/** What closing found. */
export type DigestClose = { state: 'closed'; digest: ClosedDigest } | { state: 'early'; closeAt: number } | { state: 'flushed' } | { state: 'unknown' };

/** An open digest (for the admin list and the gauge). */
export interface OpenDigest {
  group: string;
  seq: number;
  closeAt: number;
}

/** An open digest as the admin list shows it: what it gathers, how many items it holds now. */
export interface OpenDigestDetail extends OpenDigest {
  /** The digest id (the flush operation's message key). */
  id: string;
  route: string;
  recipient: string;
  key: string;
  count: number;
  openedAt: number;
}

/** What a cancel did to a message's membership of a group (digest-remove.lua). */
export type DigestRemoval =
  | { outcome: 'removed'; seq: number }
  | { outcome: 'kept_out' }
  | { outcome: 'already_removed'; seq?: number }
  | { outcome: 'closed' | 'flushed'; seq: number };

/** A message's place in a group: the digest it is in, or that a cancel took it out. */
export type DigestMembership = { state: 'member'; seq: number; position: number } | { state: 'removed'; seq?: number } | { state: 'none' };

/** Who a group is for; kept on the group when a digest opens, for the admin list. */
export interface DigestGroupInfo {
  route: string;
  recipient: string;
  key: string;
}

/**
 * Digest groups (docs/digests.md): joins, closes and the open list, each one
 * script in the group's slot, so a member joins once and a digest closes once
 * however many workers race on it.
 */
export class DigestStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeyBuilder,
    private readonly options: { retentionMs: number },
  ) {}

  /** Joins `messageKey` to group `group` with `item` (JSON, bounded by the caller). */
  async join(group: string, messageKey: string, item: string, o: { now: number; closeAt: number; maxItems: number; maxBytes: number } & DigestGroupInfo): Promise<DigestJoin> {
    const k = this.keys;
    const r = (await runScript(
      this.redis,
      'digest-join',
      [k.digestGroup(group), k.digestItems(group), k.digestMember(group, messageKey), k.digestOpenIndexOf(group)],
      {
        now: decimal(o.now),
        group,
        closeAt: decimal(o.closeAt),
        maxItems: decimal(o.maxItems),
        maxBytes: decimal(o.maxBytes),
        retentionMs: decimal(this.options.retentionMs),
        route: o.route,
        recipient: o.recipient,
        key: o.key,
      },
      [item],
    )) as string[];
    const closed: DigestJoin['closed'] = [];
    for (let i = 5; i + 1 < r.length; i += 2) closed.push({ seq: Number(r[i]), reason: r[i + 1] as DigestCloseReason });
    return {
      status: r[0] as DigestJoin['status'],
      seq: Number(r[1]),
      state: r[2] as DigestJoin['state'],
      opened: Number(r[3]) === 1,
      ...(r[4] ? { closeAt: Number(r[4]) } : {}),
      closed,
    };
  }

  /** Closes digest `seq` of `group` when its time has come (or reads it again when closed before). */
  async close(group: string, seq: number, now: number): Promise<DigestClose> {
    const k = this.keys;
    const r = (await runScript(this.redis, 'digest-close', [k.digestGroup(group), k.digestItems(group), k.digestOpenIndexOf(group)], { mode: 'close', seq: decimal(seq), now: decimal(now), group })) as string[];
    if (r[0] === 'early') return { state: 'early', closeAt: Number(r[1]) };
    if (r[0] !== 'closed') return { state: r[0] as 'flushed' | 'unknown' };
    const info = JSON.parse(r[1] as string) as Record<string, string>;
    return {
      state: 'closed',
      digest: { reason: info.reason as DigestCloseReason, openedAt: Number(info.openedAt), closeAt: Number(info.closeAt), closedAt: Number(info.closedAt), items: r.slice(2) },
    };
  }

  /** Drops a closed digest's items once its flush operation's job is in Redis (it carries them from there on); true the first time. */
  async flushed(group: string, seq: number, now: number): Promise<boolean> {
    const k = this.keys;
    const r = (await runScript(this.redis, 'digest-close', [k.digestGroup(group), k.digestItems(group), k.digestOpenIndexOf(group)], { mode: 'flushed', seq: decimal(seq), now: decimal(now), group })) as unknown[];
    return Number(r[1]) === 1;
  }

  /**
   * Takes `messageKey` out of its digest of `group` for a cancel: out of the
   * open digest, or kept out before it joins. A member of a closed digest
   * stays (its flush sends the items the close fixed).
   */
  async remove(group: string, messageKey: string): Promise<DigestRemoval> {
    const k = this.keys;
    const [outcome, seq] = (await runScript(this.redis, 'digest-remove', [k.digestGroup(group), k.digestItems(group), k.digestMember(group, messageKey)], {
      retentionMs: decimal(this.options.retentionMs),
    })) as [DigestRemoval['outcome'], string];
    if (outcome === 'kept_out') return { outcome };
    if (outcome === 'already_removed') return seq ? { outcome, seq: Number(seq) } : { outcome };
    return { outcome, seq: Number(seq) };
  }

  /** Where `messageKey` is in `group`: a member of digest `seq`, taken out by a cancel, or not (yet) joined. */
  async membership(group: string, messageKey: string): Promise<DigestMembership> {
    const value = await this.redis.get(this.keys.digestMember(group, messageKey));
    if (value === null) return { state: 'none' };
    const removed = value.startsWith('x');
    const [seq, position] = (removed ? value.slice(2) : value).split(':');
    if (removed) return seq ? { state: 'removed', seq: Number(seq) } : { state: 'removed' };
    return { state: 'member', seq: Number(seq), position: Number(position) };
  }

  /** Open digests with what they gather and their item counts now, soonest close first (at most `limit`). */
  async openDigests(limit = 100): Promise<OpenDigestDetail[]> {
    const open = (await this.listOpen(limit)).slice(0, limit);
    const rows = await Promise.all(open.map((d) => this.redis.hmget(this.keys.digestGroup(d.group), 'open', 'count', 'openedAt', 'route', 'to', 'key')));
    const out: OpenDigestDetail[] = [];
    open.forEach((d, i) => {
      const [seq, count, openedAt, route, to, key] = rows[i] as Array<string | null>;
      // Closed between the two reads: no longer open.
      if (seq !== String(d.seq)) return;
      out.push({ ...d, id: digestId(d.group, d.seq), route: route ?? '', recipient: to ?? '', key: key ?? '', count: Number(count), openedAt: Number(openedAt) });
    });
    return out;
  }

  /** Open digests, soonest close first (at most `limit` per shard). */
  async listOpen(limit = 100): Promise<OpenDigest[]> {
    const all = await Promise.all(this.keys.allDigestOpenIndexes().map((key) => this.redis.zrange(key, 0, limit - 1, 'WITHSCORES')));
    const out: OpenDigest[] = [];
    for (const list of all) {
      for (let i = 0; i + 1 < list.length; i += 2) {
        const [group, seq] = (list[i] as string).split(':');
        out.push({ group: group as string, seq: Number(seq), closeAt: Number(list[i + 1]) });
      }
    }
    return out.sort((a, b) => a.closeAt - b.closeAt);
  }

  /** How many digests are open (the gauge). */
  async openCount(): Promise<number> {
    const counts = await Promise.all(this.keys.allDigestOpenIndexes().map((key) => this.redis.zcard(key)));
    return counts.reduce((a, b) => a + b, 0);
  }

  /** The open digest's item count and close time of a group, when one is open. */
  async openState(group: string): Promise<{ seq: number; count: number; closeAt: number } | undefined> {
    const [open, count, closeAt] = await this.redis.hmget(this.keys.digestGroup(group), 'open', 'count', 'closeAt');
    return open ? { seq: Number(open), count: Number(count), closeAt: Number(closeAt) } : undefined;
  }
}
