import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from './connection';
import { isCluster } from './connection';
import { execAcrossSlots } from './cross-slot';
import type { JournalType } from '@singleshot/core';
import type { KeyBuilder } from './keys';

/**
 * The fields a journal entry can carry, in the order the scripts write them.
 * The writing side is `journalAdd` in lua/include/journal.lua (one definition
 * for the claim, commit and replay scripts); journal.test.ts keeps the two lists equal.
 *
 * type      sent | in_doubt | dead | suppressed | duplicate | replayed
 * op, msg   operation and message key
 * recipient, channel, provider, extId (the provider's id), fence, err (error code)
 * by, via, from   a replay: who, through what, from which status
 * reason    why dead, suppressed, cancelled, scheduled or deferred (or, for a replay, why it was)
 * ts        ms
 */
export const JOURNAL_FIELDS = [
  'type',
  'op',
  'msg',
  'recipient',
  'channel',
  'provider',
  'extId',
  'fence',
  'err',
  'by',
  'via',
  'from',
  'reason',
  'ts',
] as const;

export type JournalField = (typeof JOURNAL_FIELDS)[number];

/** A journal entry's fields as stored (strings; a field an entry does not carry is absent). */
export type JournalFields = Partial<Record<JournalField, string>>;

/** One journal entry: a state change that matters, durable past job retention. */
export interface JournalEntry {
  id: string;
  shard: number;
  type: JournalType | string;
  ts: number;
  fields: JournalFields;
}

function toEntry(shard: number, id: string, flat: string[]): JournalEntry {
  const fields: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i] as string] = flat[i + 1] as string;
  return { id, shard, type: fields.type ?? 'unknown', ts: Number(fields.ts ?? id.split('-')[0]), fields };
}

/** Stream IDs compare by their ms part, then the sequence. */
export function compareStreamIds(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am - bm || as - bs;
}

/**
 * Reads the journal: one Redis stream per shard, merged by entry id (time).
 * Writes happen only inside the commit and claim scripts.
 */
type XreadReply = [string, [string, string[]][]][];

export class JournalReader {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeyBuilder,
  ) {}

  /** The newest `count` entries over all shards, oldest first. */
  async tail(count: number): Promise<JournalEntry[]> {
    const results = await execAcrossSlots(this.redis, this.keys.allJournals().map((key) => (p) => p.xrevrange(key, '+', '-', 'COUNT', count)));
    const all = results.flatMap(([, rows], shard) =>
      ((rows as [string, string[]][]) ?? []).map(([id, flat]) => toEntry(shard, id, flat)),
    );
    return all.sort((a, b) => compareStreamIds(a.id, b.id)).slice(-count);
  }

  /** Entries between two times (ms, inclusive), oldest first, at most `limit`. */
  async range(fromMs: number, toMs: number, limit = 1000): Promise<JournalEntry[]> {
    const results = await execAcrossSlots(this.redis, this.keys.allJournals().map((key) => (p) => p.xrange(key, String(fromMs), String(toMs), 'COUNT', limit)));
    const all = results.flatMap(([, rows], shard) =>
      ((rows as [string, string[]][]) ?? []).map(([id, flat]) => toEntry(shard, id, flat)),
    );
    return all.sort((a, b) => compareStreamIds(a.id, b.id)).slice(0, limit);
  }

  /**
   * The entries of one operation, oldest first: those whose ids its state
   * remembers (`journalIds`: claims, commits, cancels, replays) and those of
   * its delivery feedback, whose ids its feedback record keeps
   * (`KeyBuilder.feedback`, `jid:<seq>`): feedback is recorded beside the
   * state, never in it. Both keys share the journal's shard tag, so this is
   * one round trip, two when the operation has feedback.
   */
  async forOperation(operationKey: string, journalIds: string[]): Promise<JournalEntry[]> {
    const shard = this.keys.shard(operationKey);
    const pipeline = this.redis.pipeline().hgetall(this.keys.feedback(operationKey));
    const [[feedbackErr, feedback] = [null, {}], ...rows] = (await this.rangeEach(pipeline, shard, journalIds).exec()) ?? [];
    if (feedbackErr) throw feedbackErr;
    const known = new Set(journalIds);
    const feedbackIds = Object.entries(feedback as Record<string, string>)
      .filter(([field, id]) => field.startsWith('jid:') && !known.has(id))
      .map(([, id]) => id);
    const more = feedbackIds.length > 0 ? ((await this.rangeEach(this.redis.pipeline(), shard, feedbackIds).exec()) ?? []) : [];
    return [...rows, ...more]
      .flatMap(([err, found]) => {
        if (err) throw err;
        return ((found as [string, string[]][]) ?? []).map(([id, flat]) => toEntry(shard, id, flat));
      })
      .sort((a, b) => compareStreamIds(a.id, b.id));
  }

  /** Queues an XRANGE of each id on `pipeline` (one entry each, none when trimmed). */
  private rangeEach(pipeline: ChainableCommander, shard: number, ids: readonly string[]): ChainableCommander {
    const key = this.keys.journal(shard);
    for (const id of ids) pipeline.xrange(key, id, id);
    return pipeline;
  }

  /**
   * Blocks until entries newer than `after` (per shard ids) arrive, up to
   * `blockMs`. Use a dedicated connection: XREAD BLOCK holds it.
   */
  async follow(after: Map<number, string>, blockMs: number): Promise<JournalEntry[]> {
    const keys = this.keys.allJournals();
    const result = isCluster(this.redis) ? await this.pollEach(keys, after, blockMs) : await this.readAll(keys, after, blockMs);
    if (!result) return [];
    const entries: JournalEntry[] = [];
    for (const [key, rows] of result) {
      const shard = keys.indexOf(key);
      for (const [id, flat] of rows) {
        entries.push(toEntry(shard, id, flat));
        after.set(shard, id);
      }
    }
    return entries.sort((a, b) => compareStreamIds(a.id, b.id));
  }

  private async readAll(keys: string[], after: Map<number, string>, blockMs: number): Promise<XreadReply | null> {
    const ids = keys.map((_, shard) => after.get(shard) ?? '$');
    return (await this.redis.xread('COUNT', 1000, 'BLOCK', blockMs, 'STREAMS', ...keys, ...ids)) as XreadReply | null;
  }

  /**
   * On a cluster one XREAD cannot name streams of several slots: read each
   * shard's stream (non-blocking), and wait up to `blockMs` when none had news.
   * `$` is resolved to the stream's last id first, so nothing written after
   * the start is missed between polls.
   */
  private async pollEach(keys: string[], after: Map<number, string>, blockMs: number): Promise<XreadReply | null> {
    await Promise.all(
      keys.map(async (key, shard) => {
        if (after.has(shard)) return;
        const [last] = (await this.redis.xrevrange(key, '+', '-', 'COUNT', 1)) as [string, string[]][];
        after.set(shard, last?.[0] ?? '0-0');
      }),
    );
    const replies = await Promise.all(
      keys.map(async (key, shard) => (await this.redis.xread('COUNT', 1000, 'STREAMS', key, after.get(shard) ?? '0-0')) as XreadReply | null),
    );
    const found = replies.flatMap((r) => r ?? []);
    if (found.length > 0) return found;
    await new Promise((r) => setTimeout(r, Math.min(blockMs, 500)));
    return null;
  }

  /** Counts entries by type over every shard (for checkers and reports). */
  async countByType(): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const key of this.keys.allJournals()) {
      let start = '-';
      for (;;) {
        const rows = (await this.redis.xrange(key, start, '+', 'COUNT', 5000)) as [string, string[]][];
        for (const [, flat] of rows) {
          const type = toEntry(0, '0-0', flat).type;
          counts[type] = (counts[type] ?? 0) + 1;
        }
        if (rows.length < 5000) break;
        start = `(${rows[rows.length - 1]?.[0]}`;
      }
    }
    return counts;
  }
}
