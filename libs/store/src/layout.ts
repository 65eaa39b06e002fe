import { SingleshotError } from '@singleshot/core';
import type { RedisClient } from './connection';
import type { KeyBuilder } from './keys';
import { LAYOUT_VERSION } from './layout-version';
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

/**
 * Reads every shard's layout version and throws `LayoutError` unless each
 * holds the version this code knows; a shard that holds none (a new Redis) is
 * stamped with ours, but only once no shard refused: a refused process writes
 * nothing.
 */
export async function checkLayout(redis: RedisClient, keys: KeyBuilder, known: number = LAYOUT_VERSION): Promise<void> {
  const layouts = keys.allLayouts();
  const found = await Promise.all(layouts.map((key) => redis.get(key)));
  refuseUnknown(found.filter((v): v is string => v !== null), keys.prefix, known);
  const missing = layouts.filter((_, i) => found[i] === null);
  if (missing.length === 0) return;
  // Stamped in a script, so a process of another version stamping at the same moment is read, never overwritten.
  const held = (await Promise.all(missing.map((key) => runScript(redis, 'layout-stamp', [key], { version: String(known) })))).map(String);
  refuseUnknown(held, keys.prefix, known);
}

function refuseUnknown(held: readonly string[], prefix: string, known: number): void {
  const unknown = held.find((v) => !/^[1-9]\d{0,8}$/.test(v) || Number(v) > known);
  if (unknown !== undefined) {
    throw new LayoutError(
      `Redis (key prefix "${prefix}") holds layout ${unknown}, which this singleshot does not know (it knows layout ${known}): ` +
        'it was written by a newer version. Upgrade this process; an older process never acts on a newer layout.',
      'LAYOUT_UNKNOWN',
      held,
    );
  }
  const older = held.find((v) => Number(v) < known);
  if (older !== undefined) {
    throw new LayoutError(`Redis (key prefix "${prefix}") holds layout ${older}, and this singleshot (layout ${known}) has no migration from it.`, 'LAYOUT_TOO_OLD', held);
  }
}
