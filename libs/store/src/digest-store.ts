import type { RedisClient } from './connection';
import type { KeyBuilder } from './keys';
import { decimal } from './script-options';
import { runScript } from './scripts';

/** Why a digest closed. */
export type DigestCloseReason = 'window' | 'max_items' | 'bytes';

/** What a join did (digest-join-4.lua). */
export interface DigestJoin {
  /** `duplicate`: the message joined this group before (a redelivery, another channel). */
  status: 'joined' | 'duplicate';
  /** The digest the message is in. */
  seq: number;
  /** That digest's state: open, closed (flush not yet enqueued) or flushed. */
  state: 'open' | 'closed' | 'flushed';
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
  async join(group: string, messageKey: string, item: string, o: { now: number; closeAt: number; maxItems: number; maxBytes: number }): Promise<DigestJoin> {
    const k = this.keys;
    const r = (await runScript(
      this.redis,
      'digest-join-4',
      [k.digestGroup(group), k.digestItems(group), k.digestMember(group, messageKey), k.digestOpenIndexOf(group)],
      { now: decimal(o.now), group, closeAt: decimal(o.closeAt), maxItems: decimal(o.maxItems), maxBytes: decimal(o.maxBytes), retentionMs: decimal(this.options.retentionMs) },
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
    const r = (await runScript(this.redis, 'digest-close-3', [k.digestGroup(group), k.digestItems(group), k.digestOpenIndexOf(group)], { mode: 'close', seq: decimal(seq), now: decimal(now), group })) as string[];
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
    const r = (await runScript(this.redis, 'digest-close-3', [k.digestGroup(group), k.digestItems(group), k.digestOpenIndexOf(group)], { mode: 'flushed', seq: decimal(seq), now: decimal(now), group })) as unknown[];
    return Number(r[1]) === 1;
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
