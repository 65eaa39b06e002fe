import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { createRedis } from './connection';
import { atWriteTurnEnd } from './write-batching';

// Writes of one event-loop turn leave in one batch, replies still reach their
// callers in order, and a connection that drops mid-batch recovers.
describe('batched socket writes', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startTestRedis();
  });
  afterAll(async () => {
    await redis?.destroy();
  });

  it('sends a turn of commands in one socket write, each caller getting its own reply', async () => {
    const client = createRedis({ url: redis.url, role: 'client' });
    await client.ping();
    // Count the syscall-level writes of the connection's libuv handle.
    const handle = (client as unknown as { stream: { _handle: Record<string, (...args: unknown[]) => unknown> } }).stream._handle;
    let writes = 0;
    for (const name of ['writev', 'writeUtf8String', 'writeBuffer', 'writeLatin1String', 'writeAsciiString']) {
      const original = handle[name];
      if (typeof original !== 'function') continue;
      handle[name] = function counted(this: unknown, ...args: unknown[]) {
        writes++;
        return original.apply(this, args);
      };
    }
    const replies = await Promise.all(Array.from({ length: 200 }, (_, i) => client.incrby(`wb:${i % 7}`, i)));
    const expected = new Map<number, number>();
    replies.forEach((reply, i) => {
      const key = i % 7;
      expected.set(key, (expected.get(key) ?? 0) + i);
      expect(reply).toBe(expected.get(key));
    });
    // Unbatched, node writes each command with its own syscall (200); batched, all 200 leave together.
    expect(writes).toBe(1);
    client.disconnect();
  });

  it('runs what waits for the end of the turn before the turn\'s writes leave, and sends its writes with them', async () => {
    const client = createRedis({ url: redis.url, role: 'client' });
    await client.ping();
    const handle = (client as unknown as { stream: { _handle: Record<string, (...args: unknown[]) => unknown> } }).stream._handle;
    const order: string[] = [];
    for (const name of ['writev', 'writeUtf8String', 'writeBuffer', 'writeLatin1String', 'writeAsciiString']) {
      const original = handle[name];
      if (typeof original !== 'function') continue;
      handle[name] = function counted(this: unknown, ...args: unknown[]) {
        order.push('socket write');
        return original.apply(this, args);
      };
    }
    let late: Promise<unknown> | undefined;
    // Registered before any write of this turn: it still runs at the turn's end, after the SET below.
    expect(
      atWriteTurnEnd(client, () => {
        order.push('at turn end');
        late = client.get('wb:turn');
      }),
    ).toBe(true);
    const set = client.set('wb:turn', 'x');
    expect(order).toEqual([]);
    await set;
    // One socket write for both commands; the GET, written last, sees the SET.
    expect(order).toEqual(['at turn end', 'socket write']);
    expect(await late).toBe('x');
    client.disconnect();
  });

  it('keeps working after Redis restarts under a stream of commands', async () => {
    const client = createRedis({ url: redis.url, role: 'client' });
    await client.set('wb:restart', '0');
    const writes = Array.from({ length: 50 }, (_, i) => client.incr('wb:restart').catch(() => i));
    await redis.kill9();
    await redis.restart();
    await Promise.allSettled(writes);
    expect(await client.set('wb:after', 'ok')).toBe('OK');
    expect(await client.get('wb:after')).toBe('ok');
    client.disconnect();
  });
});
