import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { shardOf, shardTag } from '@singleshot/core';

/** What `fillStore` left in the store before a run. */
export interface RetainedFill {
  operations: number;
  fillSeconds: number;
  /** used_memory growth ÷ operations: their message records, states, histories and journal entries. */
  bytesPerOperation: number;
}

/**
 * Fills the store with `count` retained operations, then has Redis rewrite its
 * AOF and waits for it: the run starts on a store at rest, as one that has
 * held them for a while, not in the middle of the rewrite the fill set off.
 */
export async function fillStore(url: string, count: number): Promise<RetainedFill> {
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  try {
    const usedMemory = async () => Number(/^used_memory:(\d+)/m.exec(await redis.info('memory'))?.[1] ?? Number.NaN);
    const before = await usedMemory();
    const filled = await fillRetained(url, count);
    const bytes = (await usedMemory()) - before;
    const rewriting = async () => /^aof_rewrite_in_progress:1/m.test(await redis.info('persistence'));
    // One rewrite may be running already (the fill grew the file): a second waits its turn.
    for (let i = 0; i < 3000 && (await rewriting()); i++) await sleep(200);
    await redis.bgrewriteaof();
    for (let i = 0; i < 3000 && ((await rewriting()) || /^aof_rewrite_scheduled:1/m.test(await redis.info('persistence'))); i++) await sleep(200);
    return { operations: filled.operations, fillSeconds: filled.seconds, bytesPerOperation: Math.round(bytes / count) };
  } finally {
    redis.disconnect();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Fills a singleshot Redis with `count` retained operations, as a plain
 * notification leaves them once sent. Nothing of the store's layout is
 * written out here (the bench measures from outside): a notification the
 * system itself sent (the warm-up's) is the template. Every key named after
 * its operation (state, history, …) and after its message (the record naming
 * its operations) is copied, fields, items and expiry alike, under new keys in
 * the new key's shard, and its journal entry is added again to that shard's
 * journal. So the filler stays what the code writes as the code changes.
 */
export async function fillRetained(url: string, count: number): Promise<{ operations: number; seconds: number }> {
  const started = performance.now();
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  try {
    const t = await template(redis);
    const hex = (label: string) => createHash('sha256').update(label).digest('hex');
    const chunk = 600;
    for (let from = 0; from < count; from += chunk) {
      const p = redis.pipeline();
      for (let i = from; i < Math.min(count, from + chunk); i += t.perMessage) {
        const messageKey = hex(`fill-msg-${i}`);
        const ops: string[] = [];
        for (let j = i; j < Math.min(count, i + t.perMessage); j++) ops.push(hex(`fill-op-${j}`));
        const renames = new Map<string, string>([[t.messageKey, messageKey], ...t.operationKeys.map((k, n): [string, string] => [k, ops[n] ?? ops[0] ?? k])]);
        for (const operationKey of ops) {
          renames.set(t.operationKey, operationKey);
          for (const key of t.operationRecords) copy(t, p, key, renamed(key, t.operationKey, operationKey), renames);
          p.xadd(renamed(t.journalKey, t.operationKey, operationKey), '*', ...t.journalEntry.map((v) => renames.get(v) ?? v));
        }
        // The message record names only its own operations (fewer in the last one).
        renames.set(t.operationKey, ops[0] ?? t.operationKey);
        for (const key of t.messageRecords) copy(t, p, key, renamed(key, t.messageKey, messageKey), renames, new Set(t.operationKeys.slice(ops.length)));
      }
      await p.exec();
    }
    return { operations: count, seconds: Math.round((performance.now() - started) / 100) / 10 };
  } finally {
    redis.disconnect();
  }
}

interface Template {
  operationKey: string;
  messageKey: string;
  /** The operations the message record names: the sample's first, then its siblings. */
  operationKeys: string[];
  perMessage: number;
  operationRecords: string[];
  messageRecords: string[];
  journalKey: string;
  journalEntry: string[];
  /** The records copied, read once: hashes as field, value, …; lists as their items. */
  records: Map<string, TemplateRecord>;
}

interface TemplateRecord {
  type: 'hash' | 'list';
  items: string[];
  ttl: number;
}

/** A key named after `hexKey` (and tagged with its shard), named after `to` instead. */
function renamed(key: string, hexKey: string, to: string): string {
  return key.split(hexKey).join(to).split(shardTag(shardOf(hexKey))).join(shardTag(shardOf(to)));
}

/** Every key matching `pattern` (SCAN). */
export async function keysMatching(redis: Redis, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    found.push(...batch);
  } while (cursor !== '0');
  return found;
}

async function read(redis: Redis, key: string): Promise<TemplateRecord | undefined> {
  const type = await redis.type(key);
  const ttl = await redis.pttl(key);
  if (type === 'hash') return { type, items: Object.entries(await redis.hgetall(key)).flat(), ttl };
  if (type === 'list') return { type, items: await redis.lrange(key, 0, -1), ttl };
  return undefined;
}

/** The records of ours named after `hexKey`: tagged with its shard (BullMQ's job keys are not). */
async function recordsOf(redis: Redis, hexKey: string, into: Map<string, TemplateRecord>): Promise<string[]> {
  const tag = shardTag(shardOf(hexKey));
  const keys: string[] = [];
  for (const key of await keysMatching(redis, `*${hexKey}*`)) {
    const record = key.includes(tag) ? await read(redis, key) : undefined;
    if (!record) continue;
    into.set(key, record);
    keys.push(key);
  }
  return keys;
}

/** A sent operation of the warm-up: the keys named after it and its message, and its journal entry. */
async function template(redis: Redis): Promise<Template> {
  const hexOf = (key: string) => /([0-9a-f]{64})$/.exec(key)?.[1];
  for (const opRecord of await keysMatching(redis, '*:op:*')) {
    const operationKey = hexOf(opRecord);
    const state = await redis.hgetall(opRecord);
    if (!operationKey || state.status !== 'sent' || !state.messageKey) continue;
    const messageKey = state.messageKey;
    // The shard's journal: the stream tagged like the operation that holds its entry.
    const tag = shardTag(shardOf(operationKey));
    if (!opRecord.includes(tag)) throw new Error(`bench: ${opRecord} is not tagged ${tag}: the store has another shard count than the default`);
    let journalKey = '';
    let journalEntry: string[] = [];
    for (const key of await keysMatching(redis, `*${tag}*`)) {
      if ((await redis.type(key)) !== 'stream') continue;
      for (const [, fields] of await redis.xrevrange(key, '+', '-', 'COUNT', 5000)) {
        if (fields.includes(operationKey) && fields.includes('sent')) [journalKey, journalEntry] = [key, fields];
      }
    }
    if (!journalKey) continue;
    const records = new Map<string, TemplateRecord>();
    const operationRecords = await recordsOf(redis, operationKey, records);
    const messageRecords = await recordsOf(redis, messageKey, records);
    const message = messageRecords.map((k) => records.get(k)).find((r) => r?.type === 'hash');
    const named = (message?.items ?? []).filter((v, i) => i % 2 === 0 && /^[0-9a-f]{64}$/.test(v));
    if (!named.includes(operationKey)) continue;
    const operationKeys = [operationKey, ...named.filter((k) => k !== operationKey)];
    return { operationKey, messageKey, operationKeys, perMessage: operationKeys.length, operationRecords, messageRecords, journalKey, journalEntry, records };
  }
  throw new Error('bench: no sent operation in the store to copy the retained records from');
}

/** Queues a copy of one template record under `to`, with its expiry. */
function copy(t: Template, p: ReturnType<Redis['pipeline']>, from: string, to: string, renames: Map<string, string>, drop = new Set<string>()): void {
  const record = t.records.get(from);
  if (!record) return;
  const swap = (v: string) => renames.get(v) ?? v;
  if (record.type === 'hash') {
    const fields: string[] = [];
    for (let f = 0; f + 1 < record.items.length; f += 2) {
      const name = record.items[f] as string;
      if (!drop.has(name)) fields.push(swap(name), swap(record.items[f + 1] as string));
    }
    p.hset(to, ...fields);
  } else {
    p.rpush(to, ...record.items.map(swap));
  }
  if (record.ttl > 0) p.pexpire(to, record.ttl);
}
