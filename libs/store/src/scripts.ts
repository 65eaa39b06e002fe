import type { Redis } from 'ioredis';
import claim from './lua/claim-4.lua';
import commit from './lua/commit-6.lua';
import docClaim from './lua/doc-claim-3.lua';
import docCommit from './lua/doc-commit-3.lua';
import docReplay from './lua/doc-replay-2.lua';
import extendLock from './lua/extend-lock-2.lua';
import opWait from './lua/op-wait-2.lua';
import imapCursorAdvance from './lua/imap-cursor-advance-1.lua';
import indexTouch from './lua/index-touch-1.lua';
import messageArrive from './lua/message-arrive-1.lua';
import mutexAcquire from './lua/mutex-acquire-1.lua';
import mutexRelease from './lua/mutex-release-1.lua';
import rateLimit from './lua/rate-limit-1.lua';
import replay from './lua/replay-5.lua';

/**
 * Lua scripts, BullMQ style: each file is `name-N.lua` with N = number of KEYS.
 * ioredis `defineCommand` runs them with EVALSHA and falls back to EVAL after a
 * Redis restart flushed the script cache.
 */
const SCRIPTS = {
  'claim-4': claim,
  'commit-6': commit,
  'doc-claim-3': docClaim,
  'doc-commit-3': docCommit,
  'doc-replay-2': docReplay,
  'extend-lock-2': extendLock,
  'op-wait-2': opWait,
  'imap-cursor-advance-1': imapCursorAdvance,
  'index-touch-1': indexTouch,
  'message-arrive-1': messageArrive,
  'mutex-acquire-1': mutexAcquire,
  'mutex-release-1': mutexRelease,
  'rate-limit-1': rateLimit,
  'replay-5': replay,
} as const;

export type ScriptName = keyof typeof SCRIPTS;

type ScriptFn = (...args: (string | number)[]) => Promise<unknown>;

const registered = new WeakSet<Redis>();

/** Registers every script on a connection once. */
export function loadScripts(redis: Redis): void {
  if (registered.has(redis)) return;
  for (const [file, lua] of Object.entries(SCRIPTS)) {
    const numberOfKeys = Number(file.slice(file.lastIndexOf('-') + 1));
    redis.defineCommand(commandName(file as ScriptName), { numberOfKeys, lua });
  }
  registered.add(redis);
}

function commandName(file: ScriptName): string {
  return `ss_${file.replace(/-/g, '_')}`;
}

/** Runs a script by file name: keys first, then arguments. */
export async function runScript(redis: Redis, file: ScriptName, keys: string[], args: (string | number)[]): Promise<unknown> {
  loadScripts(redis);
  const fn = (redis as unknown as Record<string, ScriptFn>)[commandName(file)];
  if (!fn) throw new Error(`script ${file} is not registered`);
  return fn.call(redis, ...keys, ...args);
}
