import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shardOf, shardTag } from '@singleshot/core';
import { fillRetained, fillStore, keysMatching } from './retained-fill';
import { startRedis, type BenchServer } from './servers';

// The bench's retained store is copied from a notification the system sent:
// every record named after its operation and its message, and its journal
// entry. The copies must keep the template's shape (fields, items, expiry)
// under keys of their own in their own shard, or the "as the store fills"
// figures would measure another store than the one users run. The template
// here is written by hand in the store's naming (the bench may not import the
// store); it has what the copier relies on and nothing more.
let server: BenchServer;
let redis: Redis;
const hex = (n: number) => n.toString(16).padStart(8, '0') + 'c'.repeat(56);
const tagged = (key: string) => `ss:${shardTag(shardOf(key))}`;
const ttl = 7 * 86_400_000;
const op = hex(2);
const sibling = hex(3);
const msg = hex(1);

beforeAll(async () => {
  // The bench's own Redis: AOF on, as in a run.
  server = await startRedis('everysec');
  redis = new Redis(server.url);
  await redis.hset(`${tagged(op)}:op:${op}`, 'status', 'sent', 'messageKey', msg, 'recipient', 'a', 'fence', '1');
  await redis.hset(`${tagged(sibling)}:op:${sibling}`, 'status', 'sent', 'messageKey', msg, 'recipient', 'b', 'fence', '1');
  await redis.rpush(`${tagged(op)}:hist:${op}`, '{"attempt":1,"outcome":"sent"}');
  await redis.hset(`${tagged(msg)}:msg:${msg}`, 'firstArrivalAt', '1', 'arrivals', '3', op, 'webhook:a', sibling, 'webhook:b');
  await redis.xadd(`${tagged(op)}:journal`, '*', 'type', 'sent', 'op', op, 'msg', msg);
  // A job of BullMQ named after the operation is not one of its records.
  await redis.hset(`bull:{ssq}:deliver:${op}`, 'data', '{}');
  for (const key of [`${tagged(op)}:op:${op}`, `${tagged(sibling)}:op:${sibling}`, `${tagged(op)}:hist:${op}`, `${tagged(msg)}:msg:${msg}`]) await redis.pexpire(key, ttl);
});

afterAll(async () => {
  redis.disconnect();
  await server.stop();
});

const scanAll = (pattern: string) => keysMatching(redis, pattern);

const journalLength = async () => {
  let n = 0;
  for (let s = 0; s < 16; s++) n += await redis.xlen(`ss:${shardTag(s)}:journal`);
  return n;
};

describe('fillRetained', () => {
  it('copies every record of a sent operation and its message under new keys in their own shards, with expiry and journal entry', async () => {
    const before = await journalLength();
    await fillRetained(server.url, 5);

    const states = (await scanAll('*:op:*')).filter((k) => !k.endsWith(op) && !k.endsWith(sibling));
    expect(states).toHaveLength(5);
    const messages = new Map<string, string[]>();
    for (const k of states) {
      const key = k.slice(k.lastIndexOf(':') + 1);
      expect(k).toBe(`${tagged(key)}:op:${key}`);
      const state = await redis.hgetall(k);
      expect(state).toMatchObject({ status: 'sent', recipient: 'a', fence: '1' });
      expect(state.messageKey).not.toBe(msg);
      messages.set(state.messageKey ?? '', [...(messages.get(state.messageKey ?? '') ?? []), key]);
      expect(await redis.lrange(`${tagged(key)}:hist:${key}`, 0, -1)).toEqual(['{"attempt":1,"outcome":"sent"}']);
      expect(await redis.pttl(k)).toBeGreaterThan(ttl - 60_000);
    }
    // Two operations per message, as in the template; the fifth alone in the third.
    expect([...messages.values()].map((ops) => ops.length).sort()).toEqual([1, 2, 2]);
    for (const [m, ops] of messages) {
      const record = await redis.hgetall(`${tagged(m)}:msg:${m}`);
      expect(record.arrivals).toBe('3');
      expect(Object.keys(record).filter((f) => /^[0-9a-f]{64}$/.test(f)).sort()).toEqual([...ops].sort());
      expect(await redis.pttl(`${tagged(m)}:msg:${m}`)).toBeGreaterThan(ttl - 60_000);
    }
    expect((await journalLength()) - before).toBe(5);
    expect(await scanAll('bull:*')).toEqual([`bull:{ssq}:deliver:${op}`]);
  });

  it('fillStore reports the memory per operation and leaves no AOF rewrite running', async () => {
    const filled = await fillStore(server.url, 200);
    expect(filled.operations).toBe(200);
    expect(filled.bytesPerOperation).toBeGreaterThan(100);
    expect(await redis.info('persistence')).toMatch(/^aof_rewrite_in_progress:0/m);
  });
});
