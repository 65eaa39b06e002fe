import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestGroupId, digestId } from '@singleshot/core';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { Cancellations } from './cancellations';
import { createRedis, type RedisClient } from './connection';
import { DigestRecords } from './digest-record';
import { DigestStore } from './digest-store';
import { KeyBuilder } from './keys';
import { MessageStore } from './message-store';
import { OperationStore } from './operation-store';

// A cancel of a digest member meets the member's join in the group's slot
// (digest-remove.lua against digest-join.lua) and the digest's close
// (digest-close.lua). Each case is one order of those steps and what each
// side must find: out of the open digest, kept out before the join, or left in
// a digest whose close already fixed its items, with an answer that says so.
let server: TestRedis;
let redis: RedisClient;
const keys = new KeyBuilder('dc', 4);
const retentionMs = 60_000;
let digests: DigestStore;
let records: DigestRecords;
let messages: MessageStore;
let cancels: Cancellations;
let ops: OperationStore;

const who = { by: 'test', reason: 'order withdrawn' };
let n = 0;
// Zero-padded: a pad digit that can lead a number would make two counters one key.
const fresh = () => (++n).toString(16).padStart(64, '0');
const info = { route: 'stock', recipient: 'a@x.test', key: '' };
const opts = (now: number, maxItems = 100) => ({ now, closeAt: now + 1000, maxItems, maxBytes: 100_000, ...info });
const item = (messageKey: string) => JSON.stringify({ messageKey, id: messageKey.slice(-4) });
const ids = (close: Awaited<ReturnType<DigestStore['close']>>) => (close.state === 'closed' ? close.digest.items.map((i) => (JSON.parse(i) as { messageKey: string }).messageKey) : []);

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
  digests = new DigestStore(redis, keys, { retentionMs });
  records = new DigestRecords(redis, keys, { retentionMs });
  messages = new MessageStore(redis, keys, { retentionMs });
  cancels = new Cancellations(redis, keys, { retentionMs });
  ops = new OperationStore(redis, keys, { retentionMs });
});

afterAll(async () => {
  redis.disconnect();
  await server.destroy();
});

describe('digest-remove against join and close', () => {
  it('a member cancelled while its digest is open is left out of the flush, and the count drops', async () => {
    const g = digestGroupId('stock', 'open@x.test', '');
    const [a, b, c] = [fresh(), fresh(), fresh()];
    for (const m of [a, b, c]) await digests.join(g, m, item(m), opts(1000));
    expect(await digests.remove(g, b)).toEqual({ outcome: 'removed', seq: 1 });
    expect(await digests.openState(g)).toMatchObject({ seq: 1, count: 2 });
    expect(await digests.remove(g, b)).toEqual({ outcome: 'already_removed', seq: 1 });
    // A redelivered decision of the cancelled member does not bring it back.
    expect(await digests.join(g, b, item(b), opts(1001))).toMatchObject({ status: 'cancelled', state: 'removed' });
    expect(ids(await digests.close(g, 1, 5000))).toEqual([a, c]);
    expect(await digests.membership(g, b)).toEqual({ state: 'removed', seq: 1 });
    expect(await digests.membership(g, a)).toEqual({ state: 'member', seq: 1, position: 1 });
  });

  it('a cancel before the join leaves a mark: the join that comes later does not add the member', async () => {
    const g = digestGroupId('stock', 'early@x.test', '');
    const [a, b] = [fresh(), fresh()];
    expect(await digests.remove(g, a)).toEqual({ outcome: 'kept_out' });
    expect(await digests.join(g, a, item(a), opts(1000))).toMatchObject({ status: 'cancelled', seq: 0, opened: false });
    await digests.join(g, b, item(b), opts(1000));
    expect(ids(await digests.close(g, 1, 5000))).toEqual([b]);
    expect(await digests.remove(g, a)).toEqual({ outcome: 'already_removed' });
  });

  it('a member of a closed digest stays in it: the close fixed the items, and a retried close returns the same ones', async () => {
    const g = digestGroupId('stock', 'closed@x.test', '');
    const [a, b] = [fresh(), fresh()];
    await digests.join(g, a, item(a), opts(1000, 2));
    const full = await digests.join(g, b, item(b), opts(1000, 2));
    expect(full.closed).toEqual([{ seq: 1, reason: 'max_items' }]);
    expect(await digests.remove(g, a)).toEqual({ outcome: 'closed', seq: 1 });
    expect(ids(await digests.close(g, 1, 1500))).toEqual([a, b]);
    await digests.flushed(g, 1, 1600);
    expect(await digests.remove(g, b)).toEqual({ outcome: 'flushed', seq: 1 });
  });

  it('a digest whose every member was cancelled closes with no items', async () => {
    const g = digestGroupId('stock', 'empty@x.test', '');
    const [a, b] = [fresh(), fresh()];
    for (const m of [a, b]) await digests.join(g, m, item(m), opts(1000));
    for (const m of [a, b]) await digests.remove(g, m);
    const closed = await digests.close(g, 1, 5000);
    expect(closed.state === 'closed' && closed.digest.items).toEqual([]);
  });

  it('joins and cancels racing on four connections: every member answered cancelled is out, every other in, each once', async () => {
    const g = digestGroupId('stock', 'race@x.test', '');
    const conns = [0, 1, 2, 3].map(() => createRedis({ url: server.url, role: 'client' }));
    const stores = conns.map((c) => new DigestStore(c, keys, { retentionMs }));
    try {
      const members = Array.from({ length: 300 }, () => fresh());
      const cancelled = new Set(members.filter((_, i) => i % 3 === 0));
      const answers = new Map<string, string>();
      await Promise.all(
        members.flatMap((m, i) => {
          const store = (j: number) => stores[(i + j) % stores.length] as DigestStore;
          const joins = [0, 1].map((j) => store(j).join(g, m, item(m), opts(1000, 1000)));
          const cancel = cancelled.has(m) ? [store(2).remove(g, m).then((r) => void answers.set(m, r.outcome))] : [];
          return [...joins, ...cancel];
        }),
      );
      for (const m of cancelled) expect(['removed', 'kept_out']).toContain(answers.get(m));
      const flushed = ids(await digests.close(g, 1, 5000));
      expect(new Set(flushed).size).toBe(flushed.length);
      expect(flushed.sort()).toEqual(members.filter((m) => !cancelled.has(m)).sort());
      expect((await digests.close(g, 1, 6000)).state).toBe('closed');
    } finally {
      for (const c of conns) c.disconnect();
    }
  });
});

describe('cancelling a digest member through its message', () => {
  const digestOf = (group: string) => ({ group, route: 'stock', recipient: 'b@x.test', key: 'sup-1', channel: 'webhook' });

  it('the decision records the membership; a cancel takes the member out of its open digest and says so', async () => {
    const g = digestGroupId('stock', 'b@x.test', 'sup-1');
    const m = fresh();
    await messages.recordDecision(m, [], 0, undefined, [digestOf(g)]);
    expect((await messages.get(m))?.digests).toEqual([digestOf(g)]);
    await digests.join(g, m, item(m), { ...opts(1000), recipient: 'b@x.test', key: 'sup-1' });
    const done = await cancels.cancelMessage(m, undefined, who);
    expect(done.operations).toEqual([{ operationKey: '', recipient: 'b@x.test', channel: 'webhook', outcome: 'cancelled', digest: { route: 'stock', key: 'sup-1', group: g, id: digestId(g, 1) } }]);
    expect(done.written).toContain(keys.digestMember(g, m));
    expect(await digests.openState(g)).toMatchObject({ count: 0 });
  });

  it('a cancel of other recipients leaves the membership alone', async () => {
    const g = digestGroupId('stock', 'b@x.test', 'sup-2');
    const m = fresh();
    await messages.recordDecision(m, [], 0, undefined, [{ ...digestOf(g), key: 'sup-2' }]);
    expect((await cancels.cancelMessage(m, ['c@x.test'], who)).operations).toEqual([]);
    expect(await digests.membership(g, m)).toEqual({ state: 'none' });
  });

  it('a member of a closed digest: digest_closed until its flush is sent, then already_sent with the flush operation', async () => {
    const g = digestGroupId('stock', 'b@x.test', 'sup-3');
    const [m, other] = [fresh(), fresh()];
    await messages.recordDecision(m, [], 0, undefined, [{ ...digestOf(g), key: 'sup-3' }]);
    await digests.join(g, m, item(m), { ...opts(1000, 2), recipient: 'b@x.test', key: 'sup-3' });
    await digests.join(g, other, item(other), { ...opts(1000, 2), recipient: 'b@x.test', key: 'sup-3' });
    expect((await cancels.cancelMessage(m, undefined, who)).operations[0]?.outcome).toBe('digest_closed');
    const flushOp = fresh();
    const id = digestId(g, 1);
    await records.write({ id, group: g, seq: 1, route: 'stock', recipient: 'b@x.test', key: 'sup-3', reason: 'max_items', openedAt: 1000, closeAt: 2000, closedAt: 1000, members: [m, other], state: 'flush', operationKey: flushOp });
    expect((await cancels.cancelMessage(m, undefined, who)).operations[0]).toMatchObject({ outcome: 'digest_closed', operationKey: flushOp });
    const claim = await ops.claim({ operationKey: flushOp, messageKey: id, recipient: 'b@x.test', channel: 'webhook', owner: 'w1', leaseMs: 30_000 });
    if (claim.kind !== 'go') throw new Error(`expected a claim, got ${claim.kind}`);
    await ops.commit({ operationKey: flushOp, messageKey: id, recipient: 'b@x.test', channel: 'webhook', fence: claim.fence, outcome: 'sent', provider: 'primary', externalId: 'x-1' });
    expect((await cancels.cancelMessage(m, undefined, who)).operations[0]).toMatchObject({ outcome: 'already_sent', operationKey: flushOp, digest: { id } });
    expect((await records.read(id))?.members).toEqual([m, other]);
  });
});
