import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisClient } from './connection';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { createRedis } from './connection';
import { KeyBuilder } from './keys';
import { OperationStore } from './operation-store';

// A holder whose lease ran out without a commit (killed, stalled, cut off) may
// have a provider call on its way for as long as a call's deadline under that
// lease. A later claim that reconciled in that window could find nothing at the
// provider and send a second copy: claim.lua answers `conflict` until the
// earlier holder's lease plus its settle time (kept with its claim) have passed
// (docs/protocol.md, invariant 10).

let server: TestRedis;
let redis: RedisClient;
let ops: OperationStore;
let clock = 1_700_000_000_000;
const keys = new KeyBuilder('settle', 4);
const op = (n: number) => n.toString(16).padStart(64, 'c');
const base = (key: string, owner: string) => ({ operationKey: key, messageKey: 'm'.repeat(64), recipient: 'a@example.com', channel: 'email', owner, leaseMs: 1000 });

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
  ops = new OperationStore(redis, keys, { retentionMs: 86_400_000, now: () => clock });
});

afterAll(async () => {
  redis.disconnect();
  await server.destroy();
});

describe('a claim after an earlier holder lost its lease', () => {
  it('waits out the earlier holder’s lease plus its settle time, then claims and reconciles', async () => {
    const a = await ops.claim({ ...base(op(1), 'a'), settleMs: 800 });
    expect(a).toMatchObject({ kind: 'go', fence: '1' });
    // The lock is gone (its PX ran out) while A's call may still be on its way.
    await redis.del(keys.lock(op(1)));
    clock += 1000 + 799;
    expect(await ops.claim({ ...base(op(1), 'b'), settleMs: 800 })).toEqual({ kind: 'conflict', retryInMs: 1 });
    clock += 1;
    expect(await ops.claim({ ...base(op(1), 'b'), settleMs: 800 })).toMatchObject({ kind: 'go', fence: '2', previousStatus: 'sending' });
  });

  it('counts from the last extension of the earlier lease, and with the earlier holder’s settle time, not its own', async () => {
    const a = await ops.claim({ ...base(op(2), 'a'), settleMs: 300 });
    if (a.kind !== 'go') throw new Error('expected a claim');
    clock += 500;
    expect(await ops.extend(op(2), a.fence, 1000)).toBe(true);
    await redis.del(keys.lock(op(2)));
    clock += 1000 + 299;
    expect(await ops.claim({ ...base(op(2), 'b'), settleMs: 5000 })).toEqual({ kind: 'conflict', retryInMs: 1 });
    clock += 1;
    expect(await ops.claim({ ...base(op(2), 'b'), settleMs: 5000 })).toMatchObject({ kind: 'go', fence: '2' });
  });

  it('does not wait after a holder that calls no provider (settle 0) or one that committed', async () => {
    const a = await ops.claim(base(op(3), 'a'));
    if (a.kind !== 'go') throw new Error('expected a claim');
    await redis.del(keys.lock(op(3)));
    clock += 1000;
    expect(await ops.claim({ ...base(op(3), 'b'), settleMs: 800 })).toMatchObject({ kind: 'go', fence: '2' });

    const c = await ops.claim({ ...base(op(4), 'c'), settleMs: 800 });
    if (c.kind !== 'go') throw new Error('expected a claim');
    const committed = await ops.commit({ operationKey: op(4), fence: c.fence, outcome: 'in_doubt', messageKey: 'm', recipient: 'r', channel: 'c' });
    expect(committed.kind).toBe('ok');
    expect(await ops.claim({ ...base(op(4), 'd'), settleMs: 800 })).toMatchObject({ kind: 'go', previousStatus: 'in_doubt' });
  });
});
