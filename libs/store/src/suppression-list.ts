import type { RedisClient } from './connection';
import type { KeyBuilder } from './keys';
import { decimal } from './script-options';
import { runScript } from './scripts';

/** A place in the suppression list: a recipient and when they went onto it (the index's order). */
export interface SuppressionListPosition {
  /** ms since the epoch */
  at: number;
  recipient: string;
}

/** One page of the suppression list, newest on the list first. */
export interface SuppressionListPage {
  recipients: SuppressionListPosition[];
  /** Where the next page starts (`after`); null: this was the last. */
  next: SuppressionListPosition | null;
}


interface ShardPage {
  entries: SuppressionListPosition[];
  more: boolean;
}

/** Newest first; on the same time, as Redis orders members (bytes, descending). */
function newerFirst(a: SuppressionListPosition, b: SuppressionListPosition): number {
  if (a.at !== b.at) return b.at - a.at;
  return Buffer.compare(Buffer.from(b.recipient), Buffer.from(a.recipient));
}

/**
 * The suppression list, paged by position (docs/feedback.md "Reading it"):
 * the recipients with a suppression that still holds or an opt-out, over the
 * index of every shard (suppression-write.lua keeps each with its record;
 * suppression-page.lua drops those whose every entry expired as it reads).
 * A recipient keeps its time while on the list, so paging from `next` to
 * `next` meets each recipient that stays on the list exactly once, whatever is
 * written meanwhile; one added meanwhile is newer than the pages already read.
 */
export class SuppressionList {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeyBuilder,
    private readonly options: { now?: () => number } = {},
  ) {}

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** Up to `limit` recipients after `after` (absent: from the newest). */
  async page(limit: number, after?: SuppressionListPosition): Promise<SuppressionListPage> {
    const shards = await Promise.all(Array.from({ length: this.keys.shards }, (_, shard) => this.shardPage(shard, limit, after)));
    const all = shards.flatMap((s) => s.entries).sort(newerFirst);
    const recipients = all.slice(0, limit);
    const more = all.length > limit || shards.some((s) => s.more);
    const last = recipients[recipients.length - 1];
    return { recipients, next: more && last ? last : null };
  }

  /** One shard's first `limit` recipients after `after`, looking further when expired ones were dropped on the way. */
  private async shardPage(shard: number, limit: number, after?: SuppressionListPosition): Promise<ShardPage> {
    const keys = [this.keys.suppressionIndex(shard), this.keys.suppressionExpiry(shard)];
    const entries: SuppressionListPosition[] = [];
    let cursor = after;
    for (;;) {
      const raw = (await runScript(this.redis, 'suppression-page', keys, {
        now: decimal(this.now()),
        count: limit - entries.length,
        ...(cursor ? { score: decimal(cursor.at), recipient: cursor.recipient } : {}),
      })) as [number, string, string, ...string[]];
      const [more, lastScore, lastRecipient, ...flat] = raw;
      for (let i = 0; i + 1 < flat.length; i += 2) entries.push({ recipient: flat[i] as string, at: Number(flat[i + 1]) });
      if (more !== 1) return { entries, more: false };
      if (entries.length >= limit) return { entries, more: true };
      cursor = { at: Number(lastScore), recipient: lastRecipient };
    }
  }
}
