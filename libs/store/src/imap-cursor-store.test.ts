import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisClient } from './connection';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { createRedis } from './connection';
import { KeyBuilder } from './keys';
import { ImapCursorStore } from './imap-cursor-store';

let server: TestRedis;
let redis: RedisClient;
const keys = new KeyBuilder('tcur', 4);
let cursors: ImapCursorStore;

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
  cursors = new ImapCursorStore(redis, keys);
});

afterAll(async () => {
  redis.disconnect();
  await server.destroy();
});

describe('ImapCursorStore', () => {
  it('has no cursor for a folder never read', async () => {
    expect(await cursors.get('support', 'INBOX')).toBeNull();
  });

  it('creates, advances, and never moves back under the same UIDVALIDITY', async () => {
    expect(await cursors.advance('m1', 'INBOX', '1700000000', 3)).toEqual({
      outcome: 'reset',
      cursor: { uidValidity: '1700000000', lastUid: 3 },
    });
    expect((await cursors.advance('m1', 'INBOX', 1700000000, 7)).outcome).toBe('advanced');
    expect(await cursors.advance('m1', 'INBOX', 1700000000n, 5)).toEqual({
      outcome: 'unchanged',
      cursor: { uidValidity: '1700000000', lastUid: 7 },
    });
    expect(await cursors.get('m1', 'INBOX')).toEqual({ uidValidity: '1700000000', lastUid: 7 });
  });

  it('replaces the cursor when UIDVALIDITY changes, even to a lower UID', async () => {
    await cursors.advance('m2', 'INBOX', '10', 500);
    expect(await cursors.advance('m2', 'INBOX', '11', 0)).toEqual({ outcome: 'reset', cursor: { uidValidity: '11', lastUid: 0 } });
    expect(await cursors.get('m2', 'INBOX')).toEqual({ uidValidity: '11', lastUid: 0 });
    // A late writer still on the old UIDVALIDITY replaces it again: the pair
    // stays consistent, and the poller's next EXAMINE resets it back.
    expect((await cursors.advance('m2', 'INBOX', '11', 2)).cursor).toEqual({ uidValidity: '11', lastUid: 2 });
  });

  it('keeps UIDVALIDITY exact beyond 2^53', async () => {
    const big = '18446744073709551615';
    await cursors.advance('m3', 'INBOX', big, 1);
    expect(await cursors.get('m3', 'INBOX')).toEqual({ uidValidity: big, lastUid: 1 });
  });

  it('keeps folders and mailboxes apart, and reset forgets one', async () => {
    await cursors.advance('m4', 'INBOX', '1', 10);
    await cursors.advance('m4', 'Archive', '1', 20);
    await cursors.advance('m5', 'INBOX', '1', 30);
    await cursors.reset('m4', 'INBOX');
    expect(await cursors.get('m4', 'INBOX')).toBeNull();
    expect(await cursors.get('m4', 'Archive')).toEqual({ uidValidity: '1', lastUid: 20 });
    expect(await cursors.get('m5', 'INBOX')).toEqual({ uidValidity: '1', lastUid: 30 });
  });

  it('keeps the highest UID when many advances race', async () => {
    await cursors.advance('m6', 'INBOX', '9', 0);
    const uids = Array.from({ length: 200 }, (_, i) => i + 1).sort(() => Math.random() - 0.5);
    await Promise.all(uids.map((uid) => cursors.advance('m6', 'INBOX', '9', uid)));
    expect(await cursors.get('m6', 'INBOX')).toEqual({ uidValidity: '9', lastUid: 200 });
  });

  it('refuses a malformed UIDVALIDITY or UID', async () => {
    await expect(cursors.advance('m7', 'INBOX', 'abc', 1)).rejects.toThrow(TypeError);
    await expect(cursors.advance('m7', 'INBOX', '1', -1)).rejects.toThrow(TypeError);
    await expect(cursors.advance('m7', 'INBOX', '1', 1.5)).rejects.toThrow(TypeError);
    expect(await cursors.get('m7', 'INBOX')).toBeNull();
  });
});
