import type { RedisClient } from './connection';
import { execAcrossSlots } from './cross-slot';
import type { KeyBuilder } from './keys';
import { decimal } from './script-options';
import { runScript } from './scripts';

/** One entry of the sweeper index. */
export interface ActiveEntry {
  operationKey: string;
  /** When the operation was due for its next step (ms). */
  dueAt: number;
  /** Committed `in_doubt` (the score's sign, see KeyBuilder.activeIndex). */
  inDoubt: boolean;
}

/**
 * Reads and maintains the per-shard index of non-terminal operations that the
 * claim, commit and replay scripts keep (one command per transition). The
 * recovery sweeper asks it for overdue operations; the in-doubt gauge counts
 * its negative scores.
 */
export class ActiveIndex {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeyBuilder,
  ) {}

  /** Operations of one shard whose next step was due at or before `upTo`, oldest first. */
  async overdue(shard: number, upTo: number, limit: number): Promise<ActiveEntry[]> {
    const key = this.keys.activeIndex(shard);
    const pipeline = this.redis.pipeline();
    pipeline.zrangebyscore(key, 0, upTo, 'WITHSCORES', 'LIMIT', 0, limit);
    // In doubt: scores -t with t <= upTo, i.e. between -upTo and 0 (exclusive).
    pipeline.zrevrangebyscore(key, '(0', -upTo, 'WITHSCORES', 'LIMIT', 0, limit);
    const [[, plain], [, doubt]] = (await pipeline.exec()) as [[unknown, string[]], [unknown, string[]]];
    const entries: ActiveEntry[] = [];
    for (const [flat, inDoubt] of [[plain, false], [doubt, true]] as const) {
      for (let i = 0; i + 1 < flat.length; i += 2) {
        entries.push({ operationKey: flat[i] as string, dueAt: Math.abs(Number(flat[i + 1])), inDoubt });
      }
    }
    return entries.sort((a, b) => a.dueAt - b.dueAt).slice(0, limit);
  }

  /** Moves the next check time, keeping the in-doubt sign. False: no longer in the index. */
  async touch(operationKey: string, dueAt: number): Promise<boolean> {
    const result = await runScript(this.redis, 'index-touch', [this.keys.activeIndexOf(operationKey)], { operationKey, dueAt: decimal(dueAt) });
    return Number(result) === 1;
  }

  async remove(operationKey: string): Promise<void> {
    await this.redis.zrem(this.keys.activeIndexOf(operationKey), operationKey);
  }

  /** Operations scheduled for later, over every shard's scheduled index (op-schedule.lua). */
  async scheduledCount(): Promise<number> {
    const results = await execAcrossSlots(this.redis, this.keys.allScheduledIndexes().map((key) => (p) => p.zcard(key)));
    return results.reduce((sum, [err, n]) => {
      if (err) throw err;
      return sum + Number(n);
    }, 0);
  }

  /** Operations currently committed `in_doubt`, over every shard. */
  async inDoubtCount(): Promise<number> {
    const results = await execAcrossSlots(this.redis, this.keys.allActiveIndexes().map((key) => (p) => p.zcount(key, '-inf', '(0')));
    return results.reduce((sum, [err, n]) => {
      if (err) throw err;
      return sum + Number(n);
    }, 0);
  }
}
