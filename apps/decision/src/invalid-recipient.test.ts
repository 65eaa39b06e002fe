import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventMessageKey, operationKey, parseAction, recipientProblem } from '@singleshot/core';
import { parseConfig } from '@singleshot/config';
import { enqueueDecide, listDead } from '@singleshot/queues';
import { createRuntime, type Runtime } from '@singleshot/runtime';
import { startTestRedis, waitUntil, type TestRedis } from '@singleshot/test-harness';
import { startDecision, type DecisionApp } from './worker';

// Recipients checked per channel at fan-out, so that "a\r\nBcc: evil@x" is
// never handed on to a provider.
let redis: TestRedis;
let rt: Runtime;
let decision: DecisionApp;

beforeAll(async () => {
  redis = await startTestRedis();
  const config = parseConfig({
    redis: { url: redis.url },
    log: { level: 'silent' },
    providers: {
      email: [{ name: 'relay', type: 'smtp', host: '127.0.0.1', port: 2525, from: 'ss@example.test' }],
      webhook: [{ name: 'hook', type: 'http', url: 'http://127.0.0.1:9/send' }],
    },
    routes: [
      { name: 'mail', match: { source: 'shop', type: 'mail' }, action: 'notify', channel: 'email', recipients: 'event' },
      { name: 'hook', match: { source: 'shop', type: 'hook' }, action: 'notify', channel: 'webhook', recipients: 'event' },
    ],
  });
  rt = await createRuntime(config, { app: 'test' });
  decision = startDecision(rt);
});

afterAll(async () => {
  await decision?.close();
  await rt?.close();
  await redis?.destroy();
});

const opKey = (id: string, recipient: string, channel: string) =>
  operationKey({ messageKey: eventMessageKey('shop', id), action: parseAction('notify'), recipient, channel });

async function decideEvent(id: string, type: string, recipients: string[]): Promise<void> {
  const messageKey = eventMessageKey('shop', id);
  await enqueueDecide(rt.queues, { messageKey, firstArrivalAt: Date.now(), via: 'api', input: { kind: 'event', source: 'shop', eventId: id, type, recipients, data: {} } });
  await waitUntil(async () => {
    const job = await rt.queues.decide.getJob(messageKey);
    if (job?.failedReason) throw new Error(`decide failed: ${job.failedReason}`);
    return (await job?.getState()) === 'completed';
  }, `message ${id} decided`, { timeoutMs: 20_000 });
}

describe('recipients checked per channel at fan-out', () => {
  it('a header injection on the email channel ends dead (invalid_recipient) with its DLQ record, and no deliver job', async () => {
    const evil = 'a\r\nBcc: evil@x';
    await decideEvent('evt-inject', 'mail', [evil, 'ok@example.com']);
    const deadKey = opKey('evt-inject', evil, 'email');
    const okKey = opKey('evt-inject', 'ok@example.com', 'email');
    expect(await rt.operations.get(deadKey)).toMatchObject({ status: 'dead', reason: 'invalid_recipient', lastErrorCode: 'INVALID_RECIPIENT' });
    // Delivery never sees it: no deliver job means no provider call.
    expect(await rt.queues.deliver.getJob(deadKey)).toBeUndefined();
    expect(await rt.queues.deliver.getJob(okKey)).toBeDefined();
    const records = await listDead(rt.queues, { limit: 10 });
    expect(records.filter((r) => r.operationKey === deadKey)).toEqual([expect.objectContaining({ reason: 'invalid_recipient', error: expect.objectContaining({ code: 'INVALID_RECIPIENT' }) })]);
    const record = await rt.operations.get(deadKey);
    const journal = await rt.journal.forOperation(deadKey, record?.journalIds ?? []);
    expect(journal.map((e) => e.type)).toEqual(['dead']);
  });

  it('RFC 5321 on email channels; control characters and length on webhook and log channels', async () => {
    await decideEvent('evt-mix', 'mail', ['no-at-sign', 'two@@example.com', 'ok.name+tag@example.com', `${'x'.repeat(65)}@example.com`]);
    const statusOf = async (r: string) => (await rt.operations.get(opKey('evt-mix', r, 'email')))?.status;
    expect(await statusOf('no-at-sign')).toBe('dead');
    expect(await statusOf('two@@example.com')).toBe('dead');
    expect(await statusOf(`${'x'.repeat(65)}@example.com`)).toBe('dead');
    expect(await statusOf('ok.name+tag@example.com')).toBeUndefined(); // valid: handed to delivery, not claimed yet
    expect(await rt.queues.deliver.getJob(opKey('evt-mix', 'ok.name+tag@example.com', 'email'))).toBeDefined();

    await decideEvent('evt-hook', 'hook', ['user-42', 'line\nbreak', 'y'.repeat(600)]);
    expect(await rt.queues.deliver.getJob(opKey('evt-hook', 'user-42', 'webhook'))).toBeDefined();
    expect((await rt.operations.get(opKey('evt-hook', 'line\nbreak', 'webhook')))?.reason).toBe('invalid_recipient');
    expect((await rt.operations.get(opKey('evt-hook', 'y'.repeat(600), 'webhook')))?.reason).toBe('invalid_recipient');
  });

  it('a redelivered decide job leaves one dead record and one journal entry', async () => {
    const evil = 'b\r\nBcc: evil@x';
    await decideEvent('evt-again', 'mail', [evil]);
    const deadKey = opKey('evt-again', evil, 'email');
    // The same message decided again (as after a lost ack): remove the completed job and re-add it.
    await (await rt.queues.decide.getJob(eventMessageKey('shop', 'evt-again')))?.remove();
    await enqueueDecide(rt.queues, { messageKey: eventMessageKey('shop', 'evt-again'), firstArrivalAt: Date.now(), via: 'api', input: { kind: 'event', source: 'shop', eventId: 'evt-again', type: 'mail', recipients: [evil], data: {} } });
    await waitUntil(async () => (await (await rt.queues.decide.getJob(eventMessageKey('shop', 'evt-again')))?.getState()) === 'completed', 'the redelivered decide job to complete', { timeoutMs: 20_000 });
    const record = await rt.operations.get(deadKey);
    expect((await rt.journal.forOperation(deadKey, record?.journalIds ?? [])).map((e) => e.type)).toEqual(['dead']);
    expect((await listDead(rt.queues, { limit: 50 })).filter((r) => r.operationKey === deadKey)).toHaveLength(1);
  });

  it('the checks themselves', () => {
    for (const ok of ['a@example.com', '"quoted local"@example.com', 'user@[192.0.2.1]', 'jörg@bücher.example', 'owner@localhost']) expect(recipientProblem('email', ok), ok).toBeUndefined();
    for (const bad of ['a\r\nBcc: evil@x', 'a@b\u0000.com', '@example.com', 'a@', 'a b@example.com', 'a..b@example.com', 'a@-x.com', `a@${'d'.repeat(250)}.com`]) expect(recipientProblem('email', bad), bad).toBeDefined();
    expect(recipientProblem('text', 'https://hooks.example/u/1')).toBeUndefined();
    expect(recipientProblem('text', 'x\u007f')).toBeDefined();
    expect(recipientProblem('text', 'z'.repeat(513))).toBeDefined();
  });
});
