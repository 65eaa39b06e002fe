import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { createRedis, type RedisClient } from './connection';
import { KeyBuilder } from './keys';
import { MessageStore } from './message-store';
import { OperationStore } from './operation-store';

// What the store's writes cost Redis for one plain event (three arrivals of it,
// two recipients): every command, those run inside our scripts included, read
// from INFO commandstats. The figures are pinned on purpose: a change that adds
// a command to the hot path fails here and says so, one that takes some away
// lowers them. BullMQ's job moves are not in it (`npm run bench -- --profile`
// counts the whole pipeline).
let server: TestRedis;
let redis: RedisClient;
const keys = new KeyBuilder('hp', 4);
const retentionMs = 7 * 86_400_000;
const key = (n: number) => n.toString(16).padStart(64, 'e');

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
});

afterAll(async () => {
  redis.disconnect();
  await server.destroy();
});

async function commandCounts(): Promise<Record<string, number>> {
  const info = (await redis.info('commandstats')) as string;
  const counts: Record<string, number> = {};
  for (const line of info.split('\r\n')) {
    const m = /^cmdstat_([a-z|]+):calls=(\d+)/.exec(line);
    if (m && !['info', 'config|resetstat', 'script|load'].includes(m[1]!)) counts[m[1]!] = Number(m[2]);
  }
  return counts;
}

describe('the Redis commands of a plain notification', () => {
  it('arrivals, decision, claim and commit of one event to two recipients', async () => {
    const messages = new MessageStore(redis, keys, { retentionMs });
    const ops = new OperationStore(redis, keys, { retentionMs });
    const m = key(1);
    const targets = [key(2), key(3)].map((operationKey, i) => ({ operationKey, recipient: `r${i}@example.com` }));
    // Warm: the scripts loaded (a first EVALSHA meets NOSCRIPT once per process).
    await messages.arrive(key(100), 'api');
    const warm = await ops.claim({ operationKey: key(101), messageKey: key(100), recipient: 'w@example.com', channel: 'email', owner: 'w', leaseMs: 1000 });
    if (warm.kind === 'go') await ops.commit({ operationKey: key(101), fence: warm.fence, outcome: 'sent', messageKey: key(100), recipient: 'w@example.com', channel: 'email', provider: 'p', externalId: 'x' });
    await messages.recordDecision(key(100), []);
    await redis.config('RESETSTAT');

    await Promise.all([messages.arrive(m, 'api'), messages.arrive(m, 'imap'), messages.arrive(m, 'api')]);
    await messages.markQueued(m);
    await messages.recordDecision(m, targets.map((t) => ({ operationKey: t.operationKey, target: `email:${t.recipient}` })));
    // The deliver batch carrying both operations claims them together and,
    // their sends ending together, commits them together (script-batch.ts).
    const claims = await Promise.all(
      targets.map((t) => ops.claim({ operationKey: t.operationKey, messageKey: m, recipient: t.recipient, channel: 'email', owner: 'w1', leaseMs: 30_000, job: { operationKey: t.operationKey } })),
    );
    await Promise.all(
      targets.map((t, i) => {
        const claim = claims[i]!;
        if (claim.kind !== 'go') throw new Error(`expected a claim, got ${claim.kind}`);
        const history = { at: Date.now(), attempt: 1, fence: claim.fence, outcome: 'sent' as const, provider: 'p', externalId: 'x' };
        return ops.commit({ operationKey: t.operationKey, fence: claim.fence, outcome: 'sent', messageKey: m, recipient: t.recipient, channel: 'email', provider: 'p', externalId: 'x', history });
      }),
    );

    const counts = await commandCounts();
    const scripts = counts['evalsha'] ?? 0;
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    expect({ perNotification: total / 2, scriptsPerNotification: scripts / 2, counts }).toEqual({
      perNotification: 29.5,
      scriptsPerNotification: 2,
      // Per event: arrivals 3 × (HMGET, HSET, PTTL or, at the first, PEXPIRE)
      // and an HSET for the first through a second channel; HSETNX queuedAt; the decision (HSETNX, HSET, PTTL, HMGET); per operation
      // a claim (HMGET state, HMGET suppressions, SET lock, HSET state and
      // job, PEXPIRE both, ZADD) and a commit (HMGET, GET lock, XADD, HDEL
      // job, HSET, HDEL lease, DEL lock, PTTL, RPUSH, PEXPIRE history, ZREM);
      // a GET of the layout stamp per call (both operations share a shard);
      // one EVALSHA for the arrivals, one for the decision, one for both
      // claims and one for both commits.
      counts: { del: 2, evalsha: 4, get: 4, hdel: 4, hmget: 10, hset: 11, hsetnx: 2, pexpire: 7, pttl: 5, rpush: 2, set: 2, xadd: 2, zadd: 2, zrem: 2 },
    });
  });
});
