import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, StorageType } from '@nats-io/jetstream';
import { spawnRelay, startTestNats, startTestRedis, testConfig, waitUntil, writeConfigFile, type AppProcess, type TestNats, type TestRedis } from '@singleshot/test-harness';

// A source's credentials can live in a secret file (tokenFile here; urlFile
// for URL-addressed sources goes through the same `<key>File` reader), so a
// deployment keeps them out of its ConfigMap. Against a NATS server that
// demands a token: the relay holding the right token consumes and accepts,
// one with a wrong token stays unready and accepts nothing.

const TOKEN = 'relay-test-token-5d41';
let redis: TestRedis;
let nats: TestNats;
let nc: NatsConnection;
let dir: string;
const relays: AppProcess[] = [];
const cleanups: Array<() => void> = [];

function relayWithToken(token: string, consumer: string): AppProcess {
  const tokenFile = join(dir, `${consumer}.token`);
  writeFileSync(tokenFile, `${token}\n`);
  const written = writeConfigFile(
    testConfig({
      redisUrl: redis.url,
      sources: [{ type: 'nats', name: `orders-${consumer}`, source: 'shop', servers: [nats.url], tokenFile, stream: 'ORDERS', consumer }],
    }),
  );
  cleanups.push(written.cleanup);
  const relay = spawnRelay(written.file);
  relays.push(relay);
  return relay;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'singleshot-source-secrets-'));
  [redis, nats] = await Promise.all([startTestRedis(), startTestNats({ token: TOKEN })]);
  nc = await connect({ servers: nats.url, token: TOKEN });
  await (await jetstreamManager(nc)).streams.add({ name: 'ORDERS', subjects: ['orders.>'], storage: StorageType.File });
}, 60_000);

afterAll(async () => {
  await Promise.all(relays.map((r) => r.stop()));
  await nc?.close();
  await Promise.all([redis?.destroy(), nats?.destroy()]);
  for (const c of cleanups) c();
  rmSync(dir, { recursive: true, force: true });
});

describe('source credentials from a secret file', () => {
  it('a relay with the right tokenFile consumes; one with a wrong token stays unready and accepts nothing', async () => {
    const good = relayWithToken(TOKEN, 'good');
    const bad = relayWithToken('not-the-token', 'bad');
    const readyz = async (p: AppProcess) => (await fetch(`http://127.0.0.1:${await p.metricsPort()}/readyz`)).status;
    await waitUntil(async () => (await readyz(good)) === 200 || undefined, 'the relay with the token to be ready', { timeoutMs: 30_000, intervalMs: 200 });

    await jetstream(nc).publish('orders.created', JSON.stringify({ id: 'ev-secret-1', type: 'order.created', recipients: ['a@example.com'], data: {} }));
    await waitUntil(async () => (await good.metric('singleshot_source_messages_total', { source: 'orders-good', result: 'accepted' })) === 1 || undefined, 'the event to be accepted through the token', {
      timeoutMs: 30_000,
      intervalMs: 200,
    });

    expect(await readyz(bad)).toBe(503);
    expect(await bad.metric('singleshot_source_messages_total', { source: 'orders-bad' })).toBe(0);
    // Neither token reaches a log line or stderr, the failed login's included.
    for (const [relay, token] of [[good, TOKEN], [bad, 'not-the-token']] as const) {
      expect(JSON.stringify(relay.logs) + relay.stderr()).not.toContain(token);
    }
    expect(bad.logs.some((l) => l.event === 'source_unreachable')).toBe(true);
  }, 90_000);
});
