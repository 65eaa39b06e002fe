import { SingleshotError } from '@singleshot/core';
import type { RedisClient } from './connection';
import type { KeyBuilder } from './keys';
import { LAYOUT_VERSION } from './layout-version';
import { MIGRATIONS, type LayoutMigration } from './migrations/index';
import { layoutTarget, migrateShard } from './migrations/migrate';
import { runScript } from './scripts';

/** Redis holds a layout this process cannot work on: newer, unreadable, or older without a migration. */
export class LayoutError extends SingleshotError {
  constructor(
    message: string,
    code: 'LAYOUT_UNKNOWN' | 'LAYOUT_TOO_OLD',
    /** The versions the shards hold, as read. */
    readonly held: readonly string[],
  ) {
    super(message, code);
  }
}

/** What `checkLayout` checks against: this code's layout and the migrations it knows (tests pass others). */
export interface LayoutCheckOptions {
  known?: number;
  migrations?: readonly LayoutMigration[];
  /** Called before a migration runs on a shard (the process logs it). */
  onMigration?: (migration: LayoutMigration, shard: number) => void;
}

/**
 * Reads every shard's layout version and brings each to the one this code
 * knows, or throws `LayoutError`: a shard that holds none (a new Redis) is
 * stamped with ours; one that holds an older version (or a migration's mark)
 * is migrated, one numbered migration at a time (`migrateShard`); one that
 * holds a newer or unreadable version refuses the process, and so does an
 * older one without the migrations to bring it here. A process refused on
 * what it read first writes nothing.
 */
export async function checkLayout(redis: RedisClient, keys: KeyBuilder, options: LayoutCheckOptions = {}): Promise<void> {
  const known = options.known ?? LAYOUT_VERSION;
  const migrations = options.migrations ?? MIGRATIONS;
  const layouts = keys.allLayouts();
  const found = await Promise.all(layouts.map((key) => redis.get(key)));
  refuse(
    found.filter((v): v is string => v !== null),
    keys.prefix,
    known,
    migrations,
  );
  // Stamped in a script, so a process of another version stamping at the same moment is read, never overwritten.
  const held = await Promise.all(
    layouts.map(async (key, shard) => found[shard] ?? String(await runScript(redis, 'layout-stamp', [key], { version: String(known), expect: '' }))),
  );
  const after = await Promise.all(
    held.map(async (value, shard) => {
      if (value === String(known) || !(layoutTarget(value) <= known)) return value;
      const next = migrations.find((m) => m.to === (value.startsWith('migrating:') ? layoutTarget(value) : layoutTarget(value) + 1));
      if (next) options.onMigration?.(next, shard);
      return migrateShard(redis, keys, shard, value, known, migrations);
    }),
  );
  refuse(after, keys.prefix, known, []);
}

function refuse(held: readonly string[], prefix: string, known: number, migrations: readonly LayoutMigration[]): void {
  const unknown = held.find((v) => !(layoutTarget(v) <= known));
  if (unknown !== undefined) {
    throw new LayoutError(
      `Redis (key prefix "${prefix}") holds layout ${unknown}, which this singleshot does not know (it knows layout ${known}): ` +
        'it was written by a newer version. Upgrade this process; an older process never acts on a newer layout.',
      'LAYOUT_UNKNOWN',
      held,
    );
  }
  // Older (or marked) shards need every migration from there to here.
  const older = held.find((v) => v !== String(known) && !reachable(v, known, migrations));
  if (older !== undefined) {
    throw new LayoutError(`Redis (key prefix "${prefix}") holds layout ${older}, and this singleshot (layout ${known}) has no migration from it.`, 'LAYOUT_TOO_OLD', held);
  }
}

/** Whether the migrations lead from `held` (a version or a migration's mark) to `known`. */
function reachable(held: string, known: number, migrations: readonly LayoutMigration[]): boolean {
  for (let v = held.startsWith('migrating:') ? layoutTarget(held) : layoutTarget(held) + 1; v <= known; v++) {
    if (!migrations.some((m) => m.to === v)) return false;
  }
  return true;
}
