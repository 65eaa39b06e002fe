import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import type { RedisClient } from './connection';
import { createRedis } from './connection';
import { KeyBuilder } from './keys';
import { OperationStore } from './operation-store';
import { SuppressionList, type SuppressionListPosition } from './suppression-list';
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
      expect(await ops.claim(claim)).toEqual({ kind: 'ended', status: 'suppressed', endedNow: true, reason: 'recipient_suppressed' });
      expect(await redis.zscore(keys.suppressedIndexOf(claim.operationKey), claim.operationKey)).not.toBeNull();
      expect((await ops.get(claim.operationKey))?.status).toBe('suppressed');
    }
    expect((await ops.claim(claimOf('bounced@x.test', { channel: 'sms' }))).kind).toBe('go');
  });

  it('an opt-out of a category holds back that category, not a required route, not another category', async () => {
    expect(await supp.setOptOuts('optout@x.test', [{ channel: 'email', category: 'news' }], 'api')).toBe(1);
    expect(await ops.claim(claimOf('optout@x.test', { category: 'news' }))).toEqual({ kind: 'ended', status: 'suppressed', endedNow: true, reason: 'opted_out' });
    expect((await ops.claim(claimOf('optout@x.test', { category: 'news', required: true }))).kind).toBe('go');
    expect((await ops.claim(claimOf('optout@x.test', { category: 'billing' }))).kind).toBe('go');
    // PUT semantics: the new set replaces the old one.
    expect(await supp.setOptOuts('optout@x.test', [{ category: 'billing' }], 'api')).toBe(2);
    expect((await ops.claim(claimOf('optout@x.test', { category: 'news' }))).kind).toBe('go');
    expect(await ops.claim(claimOf('optout@x.test', { category: 'billing', channel: 'sms' }))).toEqual({ kind: 'ended', status: 'suppressed', endedNow: true, reason: 'opted_out' });
    expect((await supp.get('optout@x.test')).optOuts.map((o) => [o.channel, o.category])).toEqual([[undefined, 'billing']]);
  });

  it('an expired suppression no longer holds; a removed one neither, and nothing suppressed before is claimed again', async () => {
    await supp.add({ channel: 'email', recipient: 'soft@x.test', reason: 'operator', origin: 'operator', by: 'ops', expiresAt: clock + 1_000 });
    const held = claimOf('soft@x.test');
    expect(await ops.claim(held)).toMatchObject({ kind: 'ended', status: 'suppressed', endedNow: true });
    clock += 2_000;
    expect((await ops.claim(claimOf('soft@x.test'))).kind).toBe('go');
    await supp.add({ channel: 'email', recipient: 'ops@x.test', reason: 'operator', origin: 'operator', by: 'ops' });
    const before = claimOf('ops@x.test');
    expect(await ops.claim(before)).toMatchObject({ kind: 'ended', status: 'suppressed', endedNow: true });
    expect(await supp.remove({ channel: 'email', recipient: 'ops@x.test', by: 'ops' })).toBe(true);
    expect((await ops.claim(claimOf('ops@x.test'))).kind).toBe('go');
    expect(await ops.claim({ ...before, owner: 'w2' })).toEqual({ kind: 'ended', status: 'suppressed', endedNow: false });
  });

  it('a repeat with an expiry leaves the first one standing in the claim too, not only in the record', async () => {
    await supp.add({ channel: 'email', recipient: 'first@x.test', reason: 'hard_bounce', origin: 'bounce', by: 'feedback' });
    expect(await supp.add({ channel: 'email', recipient: 'first@x.test', reason: 'operator', origin: 'operator', by: 'ops', expiresAt: clock + 1_000 })).toBe(false);
    clock += 2_000;
    expect(await ops.claim(claimOf('first@x.test'))).toEqual({ kind: 'ended', status: 'suppressed', endedNow: true, reason: 'recipient_suppressed' });
    expect((await supp.get('first@x.test')).suppressions).toMatchObject([{ reason: 'hard_bounce' }]);
  });

  it('a suppression during an in-doubt attempt: the next claim reconciles and does not send', async () => {
    const claim = claimOf('doubt@x.test');
    const first = await ops.claim(claim);
    if (first.kind !== 'go') throw new Error(first.kind);
    await ops.commit({ operationKey: claim.operationKey, messageKey: claim.messageKey, recipient: claim.recipient, channel: claim.channel, fence: first.fence, outcome: 'in_doubt', provider: 'p', error: { code: 'DEADLINE', message: 't' } });
    await supp.add({ channel: 'email', recipient: 'doubt@x.test', reason: 'complaint', origin: 'complaint', by: 'feedback' });
    expect(await ops.claim(claim)).toMatchObject({ kind: 'go', previousStatus: 'in_doubt', stopReason: 'recipient_suppressed' });
  });
});

// The suppression list is kept per shard by the script that changes a
// recipient's record, and pruned as it is read: what a page shows is exactly
// the recipients with a suppression that holds or an opt-out.

/** A store and its list under their own prefix (each test starts empty). */
function setup(prefix: string) {
  const keys = new KeyBuilder(prefix, 4);
  return { keys, supp: new Suppressions(redis, keys, { retentionMs: 86_400_000, now }), list: new SuppressionList(redis, keys, { now }) };
}

/** Every page from the top, `limit` at a time, with `between(page number)` run after each page. */
async function readAll(list: SuppressionList, limit: number, between: (n: number) => Promise<void> = async () => {}): Promise<string[]> {
  const seen: string[] = [];
  let after: SuppressionListPosition | undefined;
  for (let n = 0; ; n++) {
    const page = await list.page(limit, after);
    expect(page.recipients.length).toBeLessThanOrEqual(limit);
    seen.push(...page.recipients.map((r) => r.recipient));
    if (!page.next) return seen;
    after = page.next;
    await between(n);
  }
}

const bounce = (recipient: string, extra: { channel?: string; expiresAt?: number } = {}) => ({
  channel: extra.channel ?? 'email',
  recipient,
  reason: 'hard_bounce',
  origin: 'bounce',
  by: 'feedback',
  ...(extra.expiresAt !== undefined ? { expiresAt: extra.expiresAt } : {}),
});

/** Adds each in turn, a millisecond apart (so the list's order is theirs). */
async function addInTurn(supp: Suppressions, entries: ReadonlyArray<ReturnType<typeof bounce>>): Promise<void> {
  for (const entry of entries) {
    await supp.add(entry);
    clock += 1;
  }
}

describe('the suppression list', () => {
  it('drops a recipient when their last suppression is removed or has expired, from the index keys too', async () => {
    const { keys, supp, list } = setup('sl1');
    await addInTurn(supp, [bounce('expiring@x.test', { expiresAt: clock + 1_000 }), bounce('kept@x.test'), bounce('removed@x.test')]);
    await supp.setOptOuts('opted@x.test', [{ category: 'news' }], 'api');
    clock += 10;
    expect(await readAll(list, 10)).toEqual(['opted@x.test', 'removed@x.test', 'kept@x.test', 'expiring@x.test']);

    expect(await supp.remove({ channel: 'email', recipient: 'removed@x.test', by: 'ops' })).toBe(true);
    expect(await redis.zscore(keys.suppressionIndexOf('removed@x.test'), 'removed@x.test')).toBeNull();
    await supp.setOptOuts('opted@x.test', [], 'api');
    expect(await redis.zscore(keys.suppressionIndexOf('opted@x.test'), 'opted@x.test')).toBeNull();

    clock += 1_000;
    expect(await redis.zscore(keys.suppressionIndexOf('expiring@x.test'), 'expiring@x.test')).not.toBeNull();
    expect(await readAll(list, 10)).toEqual(['kept@x.test']);
    expect(await redis.zscore(keys.suppressionIndexOf('expiring@x.test'), 'expiring@x.test')).toBeNull();
    expect(await redis.zscore(keys.suppressionExpiryOf('expiring@x.test'), 'expiring@x.test')).toBeNull();
    // The record keeps what expired, for `show`.
    expect((await supp.get('expiring@x.test')).suppressions).toHaveLength(1);
  });

  it('a recipient stays while one entry holds; the last expiry counts', async () => {
    const { supp, list } = setup('sl2');
    await supp.add(bounce('two@x.test', { expiresAt: clock + 1_000 }));
    await supp.add(bounce('two@x.test', { channel: 'sms', expiresAt: clock + 5_000 }));
    clock += 2_000;
    expect(await readAll(list, 10)).toEqual(['two@x.test']);
    clock += 5_000;
    expect(await readAll(list, 10)).toEqual([]);
  });

  it('a suppression added again after it expired is a new one: recorded, listed at the top', async () => {
    const { keys, supp, list } = setup('sl3');
    await addInTurn(supp, [bounce('again@x.test', { expiresAt: clock + 1_000 }), bounce('other@x.test')]);
    clock += 2_000;
    expect(await supp.add({ ...bounce('again@x.test'), reason: 'complaint' })).toBe(true);
    expect((await supp.get('again@x.test')).suppressions).toMatchObject([{ reason: 'complaint' }]);
    expect((await supp.get('again@x.test')).suppressions[0]?.expiresAt).toBeUndefined();
    expect(await redis.zscore(keys.suppressionExpiryOf('again@x.test'), 'again@x.test')).toBeNull();
    expect(await readAll(list, 10)).toEqual(['again@x.test', 'other@x.test']);
    // One that still holds stands, and keeps its place.
    clock += 10;
    expect(await supp.add({ ...bounce('other@x.test'), reason: 'later' })).toBe(false);
    expect(await readAll(list, 10)).toEqual(['again@x.test', 'other@x.test']);
  });

  it('paging by cursor meets each recipient once while others are added, changed, removed and expire', async () => {
    const { supp, list } = setup('sl4');
    const initial: string[] = [];
    for (let i = 0; i < 60; i++) {
      // Groups of three at the same millisecond: ties are ordered as Redis orders them.
      if (i % 3 === 0) clock += 1;
      const r = `r${String(i).padStart(2, '0')}@x.test`;
      initial.push(r);
      await supp.add(bounce(r, i % 10 === 9 ? { expiresAt: clock + 100_000 } : {}));
    }
    const removed = new Set<string>();
    const seen = await readAll(list, 7, async (n) => {
      clock += 1;
      await supp.add(bounce(`new${n}@x.test`));
      // Changes to recipients not read yet (the oldest) and to some read already.
      await supp.add(bounce(initial[n] as string, { channel: 'sms' }));
      await supp.add(bounce(initial[59 - n] as string, { channel: 'sms' }));
      if (n === 2) {
        await supp.remove({ channel: 'email', recipient: 'r05@x.test', by: 'ops' });
        await supp.remove({ channel: 'email', recipient: 'r05@x.test', by: 'ops' });
        removed.add('r05@x.test');
        await supp.remove({ channel: 'sms', recipient: 'r05@x.test', by: 'ops' });
        await supp.add(bounce('r05@x.test'));
      }
      if (n === 3) clock += 100_000;
    });
    expect(new Set(seen).size).toBe(seen.length);
    const expired = initial.filter((_, i) => i % 10 === 9);
    for (const r of initial) if (!expired.includes(r) && !removed.has(r)) expect(seen).toContain(r);
    // Newest on the list first: the initial ones in reverse order of their addition.
    expect(seen.filter((r) => initial.includes(r))).toEqual(seen.filter((r) => initial.includes(r)).sort().reverse());
  });
});
