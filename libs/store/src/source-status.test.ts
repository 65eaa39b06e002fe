import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { createRedis, type RedisClient } from './connection';
import { KeyBuilder } from './keys';
import { SOURCE_STATUS_INTERVAL_MS, SOURCE_STATUS_STALE_INTERVALS, SourceStatusStore, sourceRows } from './source-status';

// Operators read sources where they read queues: what a relay last reported,
// and, as plainly, when nothing reports (no relay, or one that stopped).

let server: TestRedis;
let redis: RedisClient;
const keys = new KeyBuilder('tsrc', 4);

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
});
afterAll(async () => {
  redis.disconnect();
  await server.destroy();
});

describe('SourceStatusStore and sourceRows', () => {
  it('joins every configured source with its latest report, and names the ones without a fresh one', async () => {
    const store = new SourceStatusStore(redis, keys);
    const now = 1_800_000_000_000;
    const staleAt = now - SOURCE_STATUS_STALE_INTERVALS * SOURCE_STATUS_INTERVAL_MS - 1;
    await store.report([
      { source: 'a', type: 'rabbitmq', reachable: true, lag: 3, reportedAt: now - 1000, reporter: 'h:1' },
      { source: 'b', type: 'nats', reachable: false, lag: null, reportedAt: now - 1000, reporter: 'h:1' },
      { source: 'c', type: 'redis-streams', reachable: true, lag: 0, reportedAt: staleAt, reporter: 'h:2' },
    ]);
    // A later report of one source (another relay) replaces that field only.
    await store.report([{ source: 'a', type: 'rabbitmq', reachable: true, lag: 1, reportedAt: now - 500, reporter: 'h:3' }]);
    // A field another version wrote that does not parse is skipped, not fatal.
    await redis.hset(keys.sourceStatus(), 'junk', '{not json');
    const configured = [
      { name: 'a', type: 'rabbitmq' },
      { name: 'b', type: 'nats' },
      { name: 'c', type: 'redis-streams' },
      { name: 'd', type: 'postgres-outbox' },
    ];
    const rows = sourceRows(configured, await store.read(), now);
    expect(rows.map((r) => [r.source, r.state, r.lag, r.reporter])).toEqual([
      ['a', 'reachable', 1, 'h:3'],
      ['b', 'unreachable', null, 'h:1'],
      ['c', 'stale', 0, 'h:2'],
      ['d', 'no report', null, null],
    ]);
    expect(rows[0]!.reportedAt).toBe(new Date(now - 500).toISOString());
  });
});
