import type { RedisClient } from './connection';
import type { ChainableCommander } from 'ioredis';
import { execAcrossSlots } from './cross-slot';
import type { KeyBuilder } from './keys';
import { decimal } from './script-options';
import { runScript } from './scripts';

export interface ReplayRequest {
  operationKey: string;
  /** Who asked (a user name, an API client id); journaled. */
  by: string;
  /** Through what (cli, api, dashboard); journaled. */
  via: string;
  /** The deliver job, kept in the state when it has none (so a lost job can be re-added). */
  job?: object;
}

export type ReplayStateResult =
  | { kind: 'replayed'; journalId: string; from: 'dead' | 'suppressed'; replays: number }
  | { kind: 'already_sent'; provider: string; externalId: string }
  | { kind: 'not_replayable'; status: string }
  | { kind: 'not_found' };

/**
 * The state half of a replay (`replay.lua`): a dead or suppressed operation
 * goes back to `pending` under its own key with a `replayed` journal entry; a
 * sent one is refused ("already sent"), one still in progress is left alone.
 * Re-enqueueing the deliver job is the caller's part (libs/queues `replay`).
 */
export async function replayOperationState(
  redis: RedisClient,
  keys: KeyBuilder,
  request: ReplayRequest,
  options: { retentionMs: number; now?: () => number },
): Promise<ReplayStateResult> {
  const now = (options.now ?? Date.now)();
  const key = request.operationKey;
  const raw = (await runScript(
    redis,
    'replay',
    [keys.op(key), keys.journalOf(key), keys.history(key), keys.activeIndexOf(key), keys.suppressedIndexOf(key), keys.opData(key), keys.layoutOf(key)],
    {
      now: decimal(now),
      by: request.by,
      via: request.via,
      retentionMs: decimal(options.retentionMs),
      journalMinId: decimal(now - options.retentionMs),
      operationKey: key,
    },
    request.job ? [JSON.stringify(request.job)] : [],
  )) as string[];
  switch (raw[0]) {
    case 'replayed':
      return { kind: 'replayed', journalId: String(raw[1]), from: raw[2] as 'dead' | 'suppressed', replays: Number(raw[3]) };
    case 'already_sent':
      return { kind: 'already_sent', provider: String(raw[1] ?? ''), externalId: String(raw[2] ?? '') };
    case 'not_replayable':
      return { kind: 'not_replayable', status: String(raw[1]) };
    case 'not_found':
      return { kind: 'not_found' };
    default:
      throw new Error(`replay script returned unknown result ${String(raw[0])}`);
  }
}

/** Suppressed operations (newest first) still within retention, over every shard. */
export async function listSuppressed(
  redis: RedisClient,
  keys: KeyBuilder,
  options: { retentionMs: number; limit?: number; now?: () => number },
): Promise<{ operationKey: string; suppressedAt: number }[]> {
  const now = (options.now ?? Date.now)();
  const limit = options.limit ?? 1000;
  const results = await execAcrossSlots(
    redis,
    keys.allSuppressedIndexes().flatMap((key) => [
      // Past retention the state is gone too: trim as we read.
      (p: ChainableCommander) => p.zremrangebyscore(key, '-inf', now - options.retentionMs),
      (p: ChainableCommander) => p.zrevrangebyscore(key, '+inf', '-inf', 'WITHSCORES', 'LIMIT', 0, limit),
    ]),
  );
  const all: { operationKey: string; suppressedAt: number }[] = [];
  for (let i = 1; i < results.length; i += 2) {
    const [err, flat] = results[i] as [Error | null, string[]];
    if (err) throw err;
    for (let j = 0; j + 1 < flat.length; j += 2) all.push({ operationKey: flat[j] as string, suppressedAt: Number(flat[j + 1]) });
  }
  return all.sort((a, b) => b.suppressedAt - a.suppressedAt).slice(0, limit);
}
