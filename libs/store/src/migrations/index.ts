import type { RedisClient } from '../connection';
import type { KeyBuilder } from '../keys';

/**
 * One numbered change of the Redis layout. `checkLayout` applies the
 * migrations a shard lacks in order, each to every shard that holds the
 * version before it, and stamps the shard with `to` once its data is
 * rewritten (the procedure is in `migrate.ts`).
 */
export interface LayoutMigration {
  /** The layout version this migration leads to (the one before it plus one). */
  to: number;
  /** What it changes, for the log line of the process that runs it. */
  describe: string;
  /**
   * Rewrites one shard's data for layout `to`. It runs while the shard holds
   * `migrating:<to>`, which every script refuses, so nothing else writes the
   * shard meanwhile; it must be safe to run again from the start (a process
   * killed midway leaves the mark, and the next process runs it again), and
   * by two processes at once.
   */
  up(redis: RedisClient, keys: KeyBuilder, shard: number): Promise<void>;
}

/**
 * Every layout migration, in order. Layout 1 is the first this code writes;
 * the next change of what a script reads or writes adds `{ to: 2, … }` here,
 * raises LAYOUT_VERSION and the Lua `LAYOUT`, and comes with a test of its
 * own: the migration up, and the refusal of a process of layout 1.
 */
export const MIGRATIONS: readonly LayoutMigration[] = [];
