import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { createRedis, type RedisClient } from './connection';
import { KeyBuilder } from './keys';
import { readSuppressionAudit } from './suppression-audit';
import { Suppressions } from './suppressions';

// The audit an operator reads: every change Suppressions made, newest first, in pages.
let server: TestRedis;
let redis: RedisClient;
const keys = new KeyBuilder('sa', 2);

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
});

afterAll(async () => {
  redis.disconnect();
  await server.destroy();
});

describe('readSuppressionAudit', () => {
  it('reads every change newest first, with who and why, and pages below an id', async () => {
    const supp = new Suppressions(redis, keys, { retentionMs: 86_400_000 });
    await supp.add({ channel: 'email', recipient: 'a@x.test', reason: 'hard_bounce', origin: 'bounce', by: 'feedback:postmark:1' });
    await supp.add({ channel: 'email', recipient: 'a@x.test', reason: 'hard_bounce', origin: 'bounce', by: 'feedback:postmark:1' });
    await supp.add({ channel: 'sms', recipient: 'b@x.test', category: 'news', reason: 'asked', origin: 'operator', by: 'dashboard:admin' });
    await supp.remove({ channel: 'email', recipient: 'a@x.test', by: 'cli:ops@host' });

    const all = await readSuppressionAudit(redis, keys, { limit: 10 });
    expect(all.map((e) => [e.change, e.recipient, e.detail.field, e.detail.by])).toEqual([
      ['remove', 'a@x.test', 's|email|*', 'cli:ops@host'],
      ['add', 'b@x.test', 's|sms|news', 'dashboard:admin'],
      ['add_existing', 'a@x.test', 's|email|*', 'feedback:postmark:1'],
      ['add', 'a@x.test', 's|email|*', 'feedback:postmark:1'],
    ]);
    expect(all[1]?.detail).toMatchObject({ reason: 'asked', origin: 'operator' });
    expect(all.every((e) => e.at > 0 && e.id.startsWith(`${e.at}-`))).toBe(true);

    const first = await readSuppressionAudit(redis, keys, { limit: 3 });
    expect(first.map((e) => e.id)).toEqual(all.slice(0, 3).map((e) => e.id));
    const next = await readSuppressionAudit(redis, keys, { limit: 3, before: first[2]?.id });
    expect(next.map((e) => e.id)).toEqual([all[3]?.id]);
  });
});
