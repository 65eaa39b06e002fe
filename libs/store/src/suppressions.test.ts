import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import type { RedisClient } from './connection';
import { createRedis } from './connection';
import { KeyBuilder } from './keys';
import { OperationStore } from './operation-store';
import { Suppressions } from './suppressions';

// A suppression or an opt-out is read by the claim, in the operation's own
// shard: each case is what a claim after the change must find.
let server: TestRedis;
let redis: RedisClient;
const keys = new KeyBuilder('sp', 4);
let clock = 1_700_000_000_000;
const now = () => clock;
let ops: OperationStore;
let supp: Suppressions;
let n = 0;
const fresh = () => (++n).toString(16).padStart(64, 'e');
const claimOf = (recipient: string, extra: { category?: string; required?: boolean; channel?: string } = {}) => ({
  operationKey: fresh(),
  messageKey: 'f'.repeat(64),
  recipient,
  channel: extra.channel ?? 'email',
  owner: 'w1',
  leaseMs: 30_000,
  ...(extra.category ? { category: extra.category } : {}),
  ...(extra.required ? { required: true } : {}),
});

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
  ops = new OperationStore(redis, keys, { retentionMs: 86_400_000, now });
  supp = new Suppressions(redis, keys, { retentionMs: 86_400_000, now });
});

afterAll(async () => {
  redis.disconnect();
  await server.destroy();
});

describe('suppressions in the claim', () => {
  it('a hard bounce suppresses every operation of the channel, in every shard; other channels go on', async () => {
    expect(await supp.add({ channel: 'email', recipient: 'bounced@x.test', reason: 'hard_bounce', origin: 'bounce', by: 'feedback' })).toBe(true);
    expect(await supp.add({ channel: 'email', recipient: 'bounced@x.test', reason: 'hard_bounce', origin: 'bounce', by: 'feedback' })).toBe(false);
    for (let i = 0; i < 8; i++) {
      const claim = claimOf('bounced@x.test', { category: i % 2 ? 'billing' : undefined, required: i % 3 === 0 });
      expect(await ops.claim(claim)).toEqual({ kind: 'suppressed', reason: 'recipient_suppressed' });
      expect(await redis.zscore(keys.suppressedIndexOf(claim.operationKey), claim.operationKey)).not.toBeNull();
      expect((await ops.get(claim.operationKey))?.status).toBe('suppressed');
    }
    expect((await ops.claim(claimOf('bounced@x.test', { channel: 'sms' }))).kind).toBe('claimed');
  });

  it('an opt-out of a category holds back that category, not a required route, not another category', async () => {
    expect(await supp.setOptOuts('optout@x.test', [{ channel: 'email', category: 'news' }], 'api')).toBe(1);
    expect(await ops.claim(claimOf('optout@x.test', { category: 'news' }))).toEqual({ kind: 'suppressed', reason: 'opted_out' });
    expect((await ops.claim(claimOf('optout@x.test', { category: 'news', required: true }))).kind).toBe('claimed');
    expect((await ops.claim(claimOf('optout@x.test', { category: 'billing' }))).kind).toBe('claimed');
    // PUT semantics: the new set replaces the old one.
    expect(await supp.setOptOuts('optout@x.test', [{ category: 'billing' }], 'api')).toBe(2);
    expect((await ops.claim(claimOf('optout@x.test', { category: 'news' }))).kind).toBe('claimed');
    expect(await ops.claim(claimOf('optout@x.test', { category: 'billing', channel: 'sms' }))).toEqual({ kind: 'suppressed', reason: 'opted_out' });
    expect((await supp.get('optout@x.test')).optOuts.map((o) => [o.channel, o.category])).toEqual([[undefined, 'billing']]);
  });

  it('an expired suppression no longer holds; a removed one neither, and nothing suppressed before is claimed again', async () => {
    await supp.add({ channel: 'email', recipient: 'soft@x.test', reason: 'operator', origin: 'operator', by: 'ops', expiresAt: clock + 1_000 });
    const held = claimOf('soft@x.test');
    expect((await ops.claim(held)).kind).toBe('suppressed');
    clock += 2_000;
    expect((await ops.claim(claimOf('soft@x.test'))).kind).toBe('claimed');
    await supp.add({ channel: 'email', recipient: 'ops@x.test', reason: 'operator', origin: 'operator', by: 'ops' });
    const before = claimOf('ops@x.test');
    expect((await ops.claim(before)).kind).toBe('suppressed');
    expect(await supp.remove({ channel: 'email', recipient: 'ops@x.test', by: 'ops' })).toBe(true);
    expect((await ops.claim(claimOf('ops@x.test'))).kind).toBe('claimed');
    expect(await ops.claim({ ...before, owner: 'w2' })).toEqual({ kind: 'terminal', status: 'suppressed' });
  });

  it('a suppression during an in-doubt attempt: the next claim reconciles and does not send', async () => {
    const claim = claimOf('doubt@x.test');
    const first = await ops.claim(claim);
    if (first.kind !== 'claimed') throw new Error(first.kind);
    await ops.commit({ operationKey: claim.operationKey, messageKey: claim.messageKey, recipient: claim.recipient, channel: claim.channel, fence: first.fence, outcome: 'in_doubt', provider: 'p', error: { code: 'TIMEOUT', message: 't' } });
    await supp.add({ channel: 'email', recipient: 'doubt@x.test', reason: 'complaint', origin: 'complaint', by: 'feedback' });
    expect(await ops.claim(claim)).toMatchObject({ kind: 'claimed', previousStatus: 'in_doubt', stopReason: 'recipient_suppressed' });
  });
});
