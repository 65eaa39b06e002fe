import type { RedisClient } from './connection';
import { SingleshotError } from '@singleshot/core';
import cancelKey from './lua/cancel-key-1.lua';
import cancelMessage from './lua/cancel-message-1.lua';
import cancelOp from './lua/cancel-op-5.lua';
import claim from './lua/claim-8.lua';
import commit from './lua/commit-7.lua';
import digestClose from './lua/digest-close-3.lua';
import digestJoin from './lua/digest-join-4.lua';
import digestRemove from './lua/digest-remove-3.lua';
import docClaim from './lua/doc-claim-3.lua';
import docCommit from './lua/doc-commit-3.lua';
import docReplay from './lua/doc-replay-2.lua';
import extendLock from './lua/extend-lock-2.lua';
import opWait from './lua/op-wait-2.lua';
import feedbackRecord from './lua/feedback-record-3.lua';
import imapCursorAdvance from './lua/imap-cursor-advance-1.lua';
import indexTouch from './lua/index-touch-1.lua';
import markWaiting from './lua/mark-waiting-2.lua';
import messageArrive from './lua/message-arrive-1.lua';
import messageDecided from './lua/message-decided-1.lua';
import mutexAcquire from './lua/mutex-acquire-1.lua';
import mutexRelease from './lua/mutex-release-1.lua';
import opSchedule from './lua/op-schedule-5.lua';
import rateLimit from './lua/rate-limit-1.lua';
import suppressionCopy from './lua/suppression-copy-1.lua';
import suppressionPage from './lua/suppression-page-2.lua';
import suppressionWrite from './lua/suppression-write-3.lua';
import replay from './lua/replay-6.lua';
import type { ScriptName, ScriptOptions } from './script-options';

export type { ScriptName, ScriptOptions } from './script-options';

/**
 * Lua scripts, BullMQ style: each file is `name-N.lua` with N = number of KEYS;
 * shared fragments (lua/include/) are expanded into them when they are bundled
 * (tools/lua-include.mjs). ioredis `defineCommand` runs them with EVALSHA and
 * falls back to EVAL after a Redis restart flushed the script cache.
 */
export const SCRIPTS: Record<ScriptName, string> = {
  'cancel-key-1': cancelKey,
  'cancel-message-1': cancelMessage,
  'cancel-op-5': cancelOp,
  'claim-8': claim,
  'commit-7': commit,
  'digest-close-3': digestClose,
  'digest-join-4': digestJoin,
  'digest-remove-3': digestRemove,
  'doc-claim-3': docClaim,
  'doc-commit-3': docCommit,
  'doc-replay-2': docReplay,
  'extend-lock-2': extendLock,
  'op-wait-2': opWait,
  'feedback-record-3': feedbackRecord,
  'imap-cursor-advance-1': imapCursorAdvance,
  'index-touch-1': indexTouch,
  'mark-waiting-2': markWaiting,
  'message-arrive-1': messageArrive,
  'message-decided-1': messageDecided,
  'mutex-acquire-1': mutexAcquire,
  'mutex-release-1': mutexRelease,
  'op-schedule-5': opSchedule,
  'rate-limit-1': rateLimit,
  'suppression-copy-1': suppressionCopy,
  'suppression-page-2': suppressionPage,
  'suppression-write-3': suppressionWrite,
  'replay-6': replay,
};

/** A script was called with another number of KEYS than its name says (a programming error). */
export class ScriptKeysError extends SingleshotError {
  constructor(script: ScriptName, expected: number, given: number) {
    super(`script ${script} takes ${expected} keys, was given ${given}`, 'SCRIPT_KEYS_MISMATCH');
  }
}

type ScriptFn = (...args: (string | number)[]) => Promise<unknown>;

const registered = new WeakSet<RedisClient>();

/** The number of KEYS a script takes: the N of `name-N.lua`. */
export function keyCount(file: ScriptName): number {
  return Number(file.slice(file.lastIndexOf('-') + 1));
}

/** Registers every script on a connection once. */
export function loadScripts(redis: RedisClient): void {
  if (registered.has(redis)) return;
  for (const [file, lua] of Object.entries(SCRIPTS)) {
    redis.defineCommand(commandName(file as ScriptName), { numberOfKeys: keyCount(file as ScriptName), lua });
  }
  registered.add(redis);
}

function commandName(file: ScriptName): string {
  return `ss_${file.replace(/-/g, '_')}`;
}

/**
 * Runs a script by file name: its KEYS, its options packed as ARGV[1] (JSON),
 * then any documents it stores as they are. Throws `ScriptKeysError` when the
 * number of keys is not the one the name says: sent anyway, Redis would read a
 * key as an argument, or an argument as a key.
 */
export async function runScript<N extends ScriptName>(
  redis: RedisClient,
  file: N,
  keys: string[],
  options: ScriptOptions[N],
  documents: readonly string[] = [],
): Promise<unknown> {
  const expected = keyCount(file);
  if (keys.length !== expected) throw new ScriptKeysError(file, expected, keys.length);
  loadScripts(redis);
  const fn = (redis as unknown as Record<string, ScriptFn>)[commandName(file)];
  if (!fn) throw new Error(`script ${file} is not registered`);
  return fn.call(redis, ...keys, JSON.stringify(options), ...documents);
}
