import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventMessageKey, operationKey, parseAction } from '@singleshot/core';
import type { Runtime } from '@singleshot/runtime';
import { spawnApps, startFakeSlack, startTestRedis, testConfig, waitUntil, writeConfigFile, type AppProcess, type FakeProviderApi, type TestRedis } from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';

// The slack provider in a real fleet: an in-doubt post (Slack took it, the
// answer was lost) is reconciled by the history lookup instead of posted again,
// and a recipient that is no Slack id ends dead at fan-out, never posted.
describe('slack in a real fleet', () => {
  let redis: TestRedis;
  let slack: FakeProviderApi;
  let fleet: AppProcess;
  let rt: Runtime;
  let base: string;
  let cleanup: () => void;

  beforeAll(async () => {
    redis = await startTestRedis();
    slack = await startFakeSlack();
    const config = testConfig({
      redisUrl: redis.url,
      delivery: { leaseMs: 5000, attempts: 5, backoffMs: [50, 100, 200], concurrency: 2, metricsPort: 0, inDoubtPolicy: 'dead' },
      routes: [{ name: 'alerts', match: { source: 'ops' }, action: 'notify', channel: 'chat', recipients: 'event', template: { subject: 'Alert', text: '{{data.what}}' } }],
      providers: { chat: [{ name: 'slack', type: 'slack', token: 'xoxb-test', endpoint: `${slack.origin}/api`, lookup: true, timeoutMs: 3000 }] },
    });
    const written = writeConfigFile(config);
    cleanup = written.cleanup;
    fleet = spawnApps('ingest,decision,delivery', written.file);
    base = `http://127.0.0.1:${await fleet.metricsPort()}`;
    rt = await testRuntime(config);
  });

  afterAll(async () => {
    await fleet?.stop();
    await rt?.close();
    await slack?.close();
    await redis?.destroy();
    cleanup?.();
  });

  const post = (id: string, recipients: string[]) =>
    fetch(`${base}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id, source: 'ops', type: 'alert', recipients, data: { what: id } }) });
  const keyOf = (id: string, recipient: string) => operationKey({ messageKey: eventMessageKey('ops', id), action: parseAction('notify'), recipient, channel: 'chat' });

  it('an answer lost after Slack took the post: reconciled by lookup, one copy, even with inDoubtPolicy dead', async () => {
    slack.scriptFor('C0FLEET001', 'accept-then-drop');
    expect((await post('evt-lost', ['C0FLEET001'])).status).toBe(202);
    const key = keyOf('evt-lost', 'C0FLEET001');
    await waitUntil(async () => ((await rt.operations.get(key))?.status === 'sent' ? true : undefined), 'the operation to be reconciled', { timeoutMs: 60_000 });
    const record = await rt.operations.get(key);
    expect(record?.externalId).toBe(slack.accepted.get(key)?.ids[0]);
    expect(slack.accepted.get(key)?.count).toBe(1);
    const history = await rt.operations.history(key);
    expect(history.map((h) => `${h.step ?? 'send'}:${h.outcome}`)).toEqual(['send:in_doubt', 'reconcile:sent']);
  });

  it('a recipient that is no Slack id ends dead (invalid_recipient) at fan-out, without a call; the others go out', async () => {
    const before = slack.requests.length;
    expect((await post('evt-mixed', ['#general', 'C0FLEET002'])).status).toBe(202);
    await waitUntil(async () => ((await rt.operations.get(keyOf('evt-mixed', 'C0FLEET002')))?.status === 'sent' ? true : undefined), 'the valid recipient to be sent', { timeoutMs: 60_000 });
    const bad = keyOf('evt-mixed', '#general');
    await waitUntil(async () => ((await rt.operations.get(bad))?.status === 'dead' ? true : undefined), 'the invalid recipient to end dead', { timeoutMs: 60_000 });
    expect((await rt.operations.get(bad))?.reason).toBe('invalid_recipient');
    expect((await rt.queues.dead.getJob(bad))?.data.error.code).toBe('INVALID_RECIPIENT');
    expect(slack.requests.slice(before).map((r) => r.recipient)).toEqual(['C0FLEET002']);
  });
});
