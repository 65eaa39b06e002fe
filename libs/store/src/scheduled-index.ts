import type { RedisClient } from './connection';
import { execAcrossSlots } from './cross-slot';
import type { KeyBuilder } from './keys';

/** One scheduled operation: its key, and when it is due (ms). */
export interface ScheduledEntry {
  operationKey: string;
  dueAt: number;
}

/**
 * Reads the per-shard index of scheduled operations (op-schedule.lua adds
 * one, the claim and a cancel remove it): the dashboard's list of what is
 * still to come, soonest first.
 */
export class ScheduledIndex {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeyBuilder,
  ) {}

  /** The `limit` soonest due over every shard, soonest first, and how many there are in all. */
  async soonest(limit: number): Promise<{ total: number; entries: ScheduledEntry[] }> {
    const indexes = this.keys.allScheduledIndexes();
    // The soonest `limit` of all are among each shard's soonest `limit`.
    const replies = await execAcrossSlots(
      this.redis,
      indexes.flatMap((key) => [(p) => p.zrange(key, 0, limit - 1, 'WITHSCORES'), (p) => p.zcard(key)]),
    );
    const entries: ScheduledEntry[] = [];
    let total = 0;
    for (let i = 0; i < replies.length; i += 2) {
      const [rangeErr, flat] = replies[i] ?? [null, []];
      const [countErr, count] = replies[i + 1] ?? [null, 0];
      if (rangeErr) throw rangeErr;
      if (countErr) throw countErr;
      total += Number(count);
      const list = (flat as string[] | null) ?? [];
      for (let j = 0; j + 1 < list.length; j += 2) entries.push({ operationKey: list[j] as string, dueAt: Number(list[j + 1]) });
    }
    entries.sort((a, b) => a.dueAt - b.dueAt || a.operationKey.localeCompare(b.operationKey));
    return { total, entries: entries.slice(0, limit) };
  }
}
