import type { RedisClient } from '../connection';
import type { KeyBuilder } from '../keys';
import { runScript } from '../scripts';
import type { LayoutMigration } from './index';

/** The mark of a shard whose data is being rewritten for layout `to`: every script refuses it. */
export const migratingTo = (to: number): string => `migrating:${to}`;

/** The version a layout value stands for: `2` and `migrating:2` both lead to 2; NaN when it is neither. */
export function layoutTarget(held: string): number {
  const m = /^(?:migrating:)?([1-9]\d{0,8})$/.exec(held);
  return m ? Number(m[1]) : Number.NaN;
}

/**
 * Brings one shard from the layout it holds to `known`, one numbered
 * migration at a time: mark the shard `migrating:<n>` (a compare-and-set
 * from what it held, so two processes never step on each other's version),
 * run the migration's `up`, stamp `<n>`. A shard found marked (a process
 * killed midway, or another one migrating now) is migrated again from the
 * mark: `up` is safe to repeat. Returns what the shard holds at the end,
 * which the caller checks: another process may have moved it further.
 */
export async function migrateShard(redis: RedisClient, keys: KeyBuilder, shard: number, held: string, known: number, migrations: readonly LayoutMigration[]): Promise<string> {
  const key = keys.layout(shard);
  let current = held;
  while (layoutTarget(current) < known || current.startsWith('migrating:')) {
    const next = current.startsWith('migrating:') ? layoutTarget(current) : layoutTarget(current) + 1;
    const migration = migrations.find((m) => m.to === next);
    if (!migration) return current;
    const mark = migratingTo(next);
    if (current !== mark) {
      const marked = String(await runScript(redis, 'layout-stamp', [key], { version: mark, expect: current }));
      if (marked !== mark) {
        current = marked;
        continue;
      }
    }
    await migration.up(redis, keys, shard);
    current = String(await runScript(redis, 'layout-stamp', [key], { version: String(next), expect: mark }));
  }
  return current;
}
