import type { RedisClient } from './connection';
import { SingleshotError } from '@singleshot/core';
import { UpgradeRequiredError } from './layout-version';
import cancelKey from './lua/cancel-key.lua';
import cancelMessage from './lua/cancel-message.lua';
import cancelOp from './lua/cancel-op.lua';
import claim from './lua/claim.lua';
import commit from './lua/commit.lua';
import digestClose from './lua/digest-close.lua';
import digestJoin from './lua/digest-join.lua';
import digestRemove from './lua/digest-remove.lua';
import docClaim from './lua/doc-claim.lua';
import docCommit from './lua/doc-commit.lua';
import docReplay from './lua/doc-replay.lua';
import extendLock from './lua/extend-lock.lua';
import fairMove from './lua/fair-move.lua';
import feedbackRecord from './lua/feedback-record.lua';
import imapCursorAdvance from './lua/imap-cursor-advance.lua';
import indexTouch from './lua/index-touch.lua';
import layoutStamp from './lua/layout-stamp.lua';
import messageArrive from './lua/message-arrive.lua';
import messageDecided from './lua/message-decided.lua';
import mutexAcquire from './lua/mutex-acquire.lua';
import mutexRelease from './lua/mutex-release.lua';
import opSchedule from './lua/op-schedule.lua';
import rateLimit from './lua/rate-limit.lua';
import suppressionCopy from './lua/suppression-copy.lua';
import suppressionPage from './lua/suppression-page.lua';
import suppressionWrite from './lua/suppression-write.lua';
import replay from './lua/replay.lua';
import type { ScriptName, ScriptOptions } from './script-options';

export type { ScriptName, ScriptOptions } from './script-options';

/**
 * Lua scripts, BullMQ style: each is called by its base name (`claim`), its
 * file is `lua/<name>.lua`, and `keys` is its signature: the number of KEYS
 * its header lists (script-options.test.ts checks the header and the code
 * against it). Shared fragments (lua/include/) are expanded into them when
 * they are bundled (tools/lua-include.mjs). ioredis `defineCommand` runs them
 * with EVALSHA and falls back to EVAL after a Redis restart flushed the
 * script cache.
 */
export const SCRIPTS: Record<ScriptName, { lua: string; keys: number }> = {
  'cancel-key': { lua: cancelKey, keys: 1 },
  'cancel-message': { lua: cancelMessage, keys: 1 },
  'cancel-op': { lua: cancelOp, keys: 7 },
  // claim, commit, message-arrive and message-decided take one or more items: `keys` is one item's (EACH_SCRIPTS).
  claim: { lua: claim, keys: 11 },
  commit: { lua: commit, keys: 8 },
  'digest-close': { lua: digestClose, keys: 3 },
  'digest-join': { lua: digestJoin, keys: 4 },
  'digest-remove': { lua: digestRemove, keys: 3 },
  'doc-claim': { lua: docClaim, keys: 3 },
  'doc-commit': { lua: docCommit, keys: 3 },
  'doc-replay': { lua: docReplay, keys: 2 },
  'extend-lock': { lua: extendLock, keys: 2 },
  'fair-move': { lua: fairMove, keys: 5 },
  'feedback-record': { lua: feedbackRecord, keys: 3 },
  'imap-cursor-advance': { lua: imapCursorAdvance, keys: 1 },
  'index-touch': { lua: indexTouch, keys: 1 },
  'layout-stamp': { lua: layoutStamp, keys: 1 },
  'message-arrive': { lua: messageArrive, keys: 1 },
  'message-decided': { lua: messageDecided, keys: 1 },
  'mutex-acquire': { lua: mutexAcquire, keys: 1 },
  'mutex-release': { lua: mutexRelease, keys: 1 },
  'op-schedule': { lua: opSchedule, keys: 6 },
  'rate-limit': { lua: rateLimit, keys: 1 },
  replay: { lua: replay, keys: 7 },
  'suppression-copy': { lua: suppressionCopy, keys: 1 },
  'suppression-page': { lua: suppressionPage, keys: 2 },
  'suppression-write': { lua: suppressionWrite, keys: 3 },
};

/** A script was called with another number of KEYS than its signature says (a programming error). */
export class ScriptKeysError extends SingleshotError {
  constructor(script: ScriptName, expected: number, given: number) {
    super(`script ${script} takes ${expected} keys, was given ${given}`, 'SCRIPT_KEYS_MISMATCH');
  }
}

/** A Redis command failed inside a script for one of its items (a key of the wrong type); the others were acted on. */
export class ScriptItemError extends SingleshotError {
  constructor(script: ScriptName, message: string) {
    super(`script ${script} failed for one item: ${message}`, 'SCRIPT_ITEM_FAILED');
  }
}

type ScriptFn = (...args: (string | number)[]) => Promise<unknown>;

const registered = new WeakSet<RedisClient>();

/** The number of KEYS a script takes (its signature). */
export function keyCount(name: ScriptName): number {
  return SCRIPTS[name].keys;
}

/** Registers every script on a connection once. */
export function loadScripts(redis: RedisClient): void {
  if (registered.has(redis)) return;
  for (const [name, { lua, keys }] of Object.entries(SCRIPTS)) {
    // A script that takes items is given its KEYS count at each call.
    redis.defineCommand(commandName(name as ScriptName), takesItems(name as ScriptName) ? { lua } : { numberOfKeys: keys, lua });
  }
  registered.add(redis);
}

function commandName(name: ScriptName): string {
  return `ss_${name.replace(/-/g, '_')}`;
}

/**
 * Runs a script by name: its KEYS, its options packed as ARGV[1] (JSON), then
 * any documents it stores as they are. Throws `ScriptKeysError` when the
 * number of keys is not the script's signature: sent anyway, Redis would read
 * a key as an argument, or an argument as a key; and `UpgradeRequiredError`
 * when the script refused to act on a layout it was not written for.
 */
export async function runScript<N extends ScriptName>(
  redis: RedisClient,
  name: N,
  keys: string[],
  options: ScriptOptions[N],
  documents: readonly string[] = [],
): Promise<unknown> {
  if (takesItems(name)) {
    const item = { keys, options, documents } as ScriptItem<EachScriptName>;
    // A script that takes items, given one: its item's refusal or error is the call's.
    const [reply] = await runEach<EachScriptName>(redis, name, [item]);
    if (reply instanceof Error) throw reply;
    return reply;
  }
  const expected = keyCount(name);
  if (keys.length !== expected) throw new ScriptKeysError(name, expected, keys.length);
  loadScripts(redis);
  const fn = (redis as unknown as Record<string, ScriptFn>)[commandName(name)];
  if (!fn) throw new Error(`script ${name} is not registered`);
  const reply = await fn.call(redis, ...keys, JSON.stringify(options), ...documents);
  // One place for every script's refusal to act on a layout it was not written for (lua/include/layout.lua).
  if (Array.isArray(reply) && reply[0] === 'upgrade_required') throw new UpgradeRequiredError(String(reply[1]));
  return reply;
}

/**
 * The scripts that take items: one or more operations (or messages) per call
 * (runEach), each acted on by the script's function for one item, as if it
 * had a call of its own (lua/include/each.lua). `keys` in SCRIPTS is one item's.
 */
export const EACH_SCRIPTS = ['claim', 'commit', 'message-arrive', 'message-decided'] as const;
export type EachScriptName = (typeof EACH_SCRIPTS)[number];

/** True for a script that takes items (EACH_SCRIPTS). */
export function takesItems(name: ScriptName): name is EachScriptName {
  return (EACH_SCRIPTS as readonly ScriptName[]).includes(name);
}

/** One item of a script that takes items: its KEYS, options, and the documents it stores as they are. */
export interface ScriptItem<N extends EachScriptName> {
  keys: string[];
  options: ScriptOptions[N];
  documents?: readonly string[];
}

/**
 * Runs a script that takes items (EACH_SCRIPTS) on several at once, in
 * one call: each item's KEYS in turn, then for each item its options, the
 * number of its documents and the documents. Answers one reply per item, in
 * order. An item whose shard holds another layout answers an
 * `UpgradeRequiredError`, one whose Redis command failed a `ScriptItemError`:
 * returned, not thrown, as the other items were acted on.
 */
export async function runEach<N extends EachScriptName>(redis: RedisClient, name: N, items: readonly ScriptItem<N>[]): Promise<unknown[]> {
  const expected = keyCount(name);
  const keys: string[] = [];
  const argv: string[] = [];
  for (const item of items) {
    if (item.keys.length !== expected) throw new ScriptKeysError(name, expected, item.keys.length);
    keys.push(...item.keys);
    const documents = item.documents ?? [];
    argv.push(JSON.stringify(item.options), String(documents.length), ...documents);
  }
  loadScripts(redis);
  const fn = (redis as unknown as Record<string, ScriptFn>)[commandName(name)];
  if (!fn) throw new Error(`script ${name} is not registered`);
  const replies = (await fn.call(redis, keys.length, ...keys, ...argv)) as unknown[];
  return replies.map((reply) => {
    if (!Array.isArray(reply)) return reply;
    if (reply[0] === 'upgrade_required') return new UpgradeRequiredError(String(reply[1]));
    if (reply[0] === 'script_error') return new ScriptItemError(name, String(reply[1]));
    return reply;
  });
}
