import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventMessageKey, operationKey, parseAction } from '@singleshot/core';
import type { Runtime } from '@singleshot/runtime';
import {
  spawnApps,
  startFakeTwilio,
  startFakeTwilioWhatsapp,
  startTestRedis,
  testConfig,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type FakeProviderApi,
  type FakeWhatsappApi,
  type TestRedis,
} from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';

const SID = `AC${'0123456789abcdef'.repeat(2)}`;
const CONTENT = `HX${'c'.repeat(32)}`;
const SENDER = 'whatsapp:+14155550100';
const HOUR = 60 * 60 * 1000;

// WhatsApp first, SMS when WhatsApp certainly cannot take it, in a real fleet:
// the 24-hour session rule decides free-form, template or fallback, and an
// in-doubt WhatsApp send is reconciled by the message-list lookup, never sent
// twice and never handed to SMS unreconciled.
describe('twilio-whatsapp → twilio-sms in a real fleet', () => {
  let redis: TestRedis;
  let wa: FakeWhatsappApi;
  let sms: FakeProviderApi;
  let fleet: AppProcess;
  let rt: Runtime;
  let base: string;
  let cleanup: () => void;

  beforeAll(async () => {
    redis = await startTestRedis();
    wa = await startFakeTwilioWhatsapp();
    wa.approve(CONTENT, 'Order {{1}} has shipped.');
    sms = await startFakeTwilio();
    const twilio = { accountSid: SID, authToken: 'token', timeoutMs: 3000 };
    const config = testConfig({
      redisUrl: redis.url,
      delivery: { leaseMs: 5000, attempts: 5, backoffMs: [50, 100, 200], concurrency: 2, metricsPort: 0, inDoubtPolicy: 'dead' },
      routes: [
        { name: 'alerts', match: { source: 'ops' }, action: 'notify', channel: 'phone', recipients: 'event', template: { subject: 'Alert', text: 'Alert {{data.what}}' } },
        { name: 'orders', match: { source: 'shop' }, action: 'notify', channel: 'phone', recipients: 'event', template: { subject: 'Order', text: 'Order {{data.what}} shipped' } },
      ],
      providers: {
        phone: [
          { name: 'wa', type: 'twilio-whatsapp', ...twilio, from: SENDER, endpoint: wa.origin, sessionWindow: 'check', templates: { orders: { contentSid: CONTENT, variables: { '1': '{{data.what}}' }, text: 'Order {{1}} has shipped.' } } },
          { name: 'sms', type: 'twilio-sms', ...twilio, from: '+14155550100', endpoint: sms.origin },
        ],
      },
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
    await wa?.close();
    await sms?.close();
    await redis?.destroy();
    cleanup?.();
  });

  const post = (source: string, id: string, recipient: string) =>
    fetch(`${base}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id, source, type: 't', recipients: [recipient], data: { what: id } }) });
  const keyOf = (source: string, id: string, recipient: string) => operationKey({ messageKey: eventMessageKey(source, id), action: parseAction('notify'), recipient, channel: 'phone' });
  const sent = async (key: string) => {
    await waitUntil(async () => ((await rt.operations.get(key))?.status === 'sent' ? true : undefined), 'the operation to be sent', { timeoutMs: 60_000 });
    return { record: await rt.operations.get(key), steps: (await rt.operations.history(key)).map((h) => `${h.provider}:${h.step ?? 'send'}:${h.outcome}`) };
  };

  it('inside the window: free-form over WhatsApp, nothing by SMS', async () => {
    const to = '+4915100000001';
    wa.inbound(`whatsapp:${to}`, SENDER, 2 * HOUR);
    expect((await post('ops', 'evt-inside', to)).status).toBe(202);
    const { record, steps } = await sent(keyOf('ops', 'evt-inside', to));
    expect(steps).toEqual(['wa:send:sent']);
    const copy = wa.accepted.get(`whatsapp:${to}\nAlert evt-inside`);
    expect(copy?.count).toBe(1);
    expect(record?.externalId).toBe(copy?.ids[0]);
    expect(sms.requests.filter((r) => r.recipient === to)).toHaveLength(0);
  });

  it('outside the window with a template: the template over WhatsApp', async () => {
    const to = '+4915100000002';
    wa.inbound(`whatsapp:${to}`, SENDER, 30 * HOUR);
    expect((await post('shop', 'evt-template', to)).status).toBe(202);
    const { steps } = await sent(keyOf('shop', 'evt-template', to));
    expect(steps).toEqual(['wa:send:sent']);
    expect(wa.requests.filter((r) => r.recipient === `whatsapp:${to}`).map((r) => r.body)).toEqual([expect.objectContaining({ ContentSid: CONTENT, ContentVariables: '{"1":"evt-template"}' })]);
    expect(sms.requests.filter((r) => r.recipient === to)).toHaveLength(0);
  });

  it('outside the window without a template: refused before any WhatsApp send, SMS takes it at once; one message in all', async () => {
    const to = '+4915100000003';
    expect((await post('ops', 'evt-outside', to)).status).toBe(202);
    const key = keyOf('ops', 'evt-outside', to);
    const { record, steps } = await sent(key);
    expect(steps).toEqual(['wa:send:failed', 'sms:send:sent']);
    expect((await rt.operations.history(key))[0]?.errorCode).toBe('WHATSAPP_OUTSIDE_SESSION');
    expect(wa.requests.filter((r) => r.recipient === `whatsapp:${to}`)).toHaveLength(0);
    expect(sms.accepted.get(`${to}\nAlert evt-outside`)?.count).toBe(1);
    expect(record?.provider).toBe('sms');
  });

  it('an answer lost after Twilio took the WhatsApp message: reconciled by lookup, one copy, no SMS', async () => {
    const to = '+4915100000004';
    wa.inbound(`whatsapp:${to}`, SENDER, HOUR);
    wa.scriptFor(`whatsapp:${to}`, 'accept-then-drop');
    expect((await post('ops', 'evt-lost', to)).status).toBe(202);
    const { record, steps } = await sent(keyOf('ops', 'evt-lost', to));
    expect(steps).toEqual(['wa:send:in_doubt', 'wa:reconcile:sent']);
    const copy = wa.accepted.get(`whatsapp:${to}\nAlert evt-lost`);
    expect(copy?.count).toBe(1);
    expect(record?.externalId).toBe(copy?.ids[0]);
    expect(sms.requests.filter((r) => r.recipient === to)).toHaveLength(0);
  });
});
