import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { InDoubtError, RetryableError } from '@singleshot/core';
import { caught, ctx, faultMatrix, request } from '@singleshot/test-fault-matrix';
import { startFakeTwilioWhatsapp, type FakeProviderApi, type FakeWhatsappApi } from '@singleshot/test-harness';
import { TwilioWhatsappProvider } from './twilio-whatsapp-provider';
import type { TwilioWhatsappProviderOptions } from './provider';

const SID = `AC${'0123456789abcdef'.repeat(2)}`;
const CONTENT = `HX${'a'.repeat(32)}`;
const ORDERS = `HX${'b'.repeat(32)}`;
const FROM = 'whatsapp:+14155550100';
const TEMPLATE_TEXT = 'Hello {{1}}, your order {{2}} is on its way.';
const templates = {
  default: { contentSid: CONTENT, variables: { '1': 'customer', '2': '{{data.orderId}}' }, text: TEMPLATE_TEXT },
  orders: { contentSid: ORDERS, variables: { '1': '{{data.name}}' } },
};
const make = (api: FakeProviderApi, extra: Partial<TwilioWhatsappProviderOptions> = {}, timeoutMs = 5_000) =>
  new TwilioWhatsappProvider({ type: 'twilio-whatsapp', name: 'wa', accountSid: SID, authToken: 'token', from: '+14155550100', endpoint: api.origin, timeoutMs, templates, ...extra });
const start = async () => {
  const api = await startFakeTwilioWhatsapp();
  api.approve(CONTENT, TEMPLATE_TEXT);
  api.approve(ORDERS, 'Hi {{1}}, thanks for your order.');
  return api;
};

// Template-only: every send is the default template, whatever the window; `{{text}}` keeps the copies apart.
const matrixTemplates = { default: { contentSid: CONTENT, variables: { '1': '{{text}}', '2': 'x' } } };
faultMatrix({
  label: 'twilio-whatsapp',
  start,
  provider: (api, timeoutMs) => make(api, { templates: matrixTemplates }, timeoutMs),
  recipient: 'whatsapp:+14155550199',
  keyOf: (r) => `${r.recipient}\n${CONTENT}${JSON.stringify({ '1': r.text, '2': 'x' })}`,
});

describe('twilio-whatsapp against the fake Twilio', () => {
  let api: FakeWhatsappApi;
  beforeAll(async () => {
    api = await start();
  });
  beforeEach(() => {
    api.reset();
    api.approve(CONTENT, TEMPLATE_TEXT);
    api.approve(ORDERS, 'Hi {{1}}, thanks for your order.');
  });
  afterAll(() => api.close());

  it('sends the route\'s template by ContentSid with its variables as JSON; whatsapp: prefixes; sid is the external id', async () => {
    const provider = make(api, { statusCallbackUrl: 'https://hooks.example.com/v1/feedback/twilio' });
    const req = { ...request('+4915112345678'), route: 'orders', data: { name: 'Ada' } };
    const result = await provider.send(req, ctx());
    const seen = api.requests.at(-1);
    expect(seen?.path).toBe(`/2010-04-01/Accounts/${SID}/Messages.json`);
    expect(seen?.body).toMatchObject({ To: 'whatsapp:+4915112345678', From: FROM, ContentSid: ORDERS, ContentVariables: JSON.stringify({ '1': 'Ada' }) });
    expect((seen?.body as Record<string, unknown>).Body).toBeUndefined();
    const callback = new URL((seen?.body as { StatusCallback: string }).StatusCallback);
    expect(callback.searchParams.get('op')).toBe(req.operationKey);
    expect(result.externalId).toMatch(/^SM[0-9a-f]{32}$/);
    expect(result.externalId).toBe(api.accepted.get(seen?.key ?? '')?.ids[0]);
    await provider.close();
  });

  it('template-only without a template for the route: WHATSAPP_OUTSIDE_SESSION, safe to fall back, nothing sent', async () => {
    const provider = make(api, { templates: {} });
    const err = await caught(provider.send(request('+4915112345679'), ctx()));
    expect(err).toBeInstanceOf(RetryableError);
    expect(err.code).toBe('WHATSAPP_OUTSIDE_SESSION');
    expect(err.safeToFallback).toBe(true);
    expect(api.requests).toHaveLength(0);
    await provider.close();
  });

  it('check, inside the window: the text goes free-form; the session is read as the newest message from the number', async () => {
    const provider = make(api, { sessionWindow: 'check' });
    api.inbound('whatsapp:+4915112340001', FROM, 23 * 60 * 60 * 1000);
    const req = request('whatsapp:+4915112340001');
    await provider.send(req, ctx());
    expect(api.requests.at(-1)?.body).toMatchObject({ To: 'whatsapp:+4915112340001', Body: req.text });
    const check = new URL(api.others.at(-1)?.path ?? '', api.origin).searchParams;
    expect(Object.fromEntries(check)).toEqual({ From: 'whatsapp:+4915112340001', To: FROM, PageSize: '1' });
    await provider.close();
  });

  it('check, outside the window: the template goes instead', async () => {
    const provider = make(api, { sessionWindow: 'check' });
    api.inbound('whatsapp:+4915112340002', FROM, 25 * 60 * 60 * 1000);
    await provider.send({ ...request('+4915112340002'), data: { orderId: 'A-7' } }, ctx());
    expect(api.requests.at(-1)?.body).toMatchObject({ ContentSid: CONTENT, ContentVariables: JSON.stringify({ '1': 'customer', '2': 'A-7' }) });
    await provider.close();
  });

  it('check, outside the window and no template: refused before any create, as a definite failure', async () => {
    const provider = make(api, { sessionWindow: 'check', templates: {} });
    const err = await caught(provider.send(request('+4915112340003'), ctx()));
    expect(err).toMatchObject({ name: 'RetryableError', code: 'WHATSAPP_OUTSIDE_SESSION', safeToFallback: true });
    expect(api.requests).toHaveLength(0);
    await provider.close();
  });

  it('Twilio\'s 63016 answer is the same definite failure', async () => {
    // The window looks open to us (an inbound 1 min ago) but Twilio refuses: its view decides.
    const provider = make(api, { sessionWindow: 'check' });
    api.inbound('whatsapp:+4915112340004', FROM);
    api.scriptFor('whatsapp:+4915112340004', { status: 400, body: { code: 63016, message: 'Failed to send freeform message because you are outside the allowed window.', status: 400 } });
    const err = await caught(provider.send(request('+4915112340004'), ctx()));
    expect(err).toMatchObject({ name: 'RetryableError', code: 'WHATSAPP_OUTSIDE_SESSION', safeToFallback: true });
    expect(api.accepted.size).toBe(0);
    await provider.close();
  });

  it('in doubt, then reconciled: lookup finds the template copy by its filled-in text, another message does not confuse it', async () => {
    const provider = make(api);
    const since = Date.now() - 1_000;
    const other = { ...request('+4915112340005'), data: { orderId: 'B-1' } };
    await provider.send(other, ctx());
    const req = { ...request('+4915112340005'), data: { orderId: 'B-2' } };
    api.scriptFor('whatsapp:+4915112340005', 'accept-then-drop');
    expect(await caught(provider.send(req, ctx()))).toBeInstanceOf(InDoubtError);
    const copy = api.accepted.get(api.requests.at(-1)?.key ?? '');
    expect(copy?.count).toBe(1);
    const target = { recipient: req.recipient, since, content: { route: 'shop', text: req.text, subject: req.subject, data: req.data } };
    expect(await provider.lookup(req.operationKey, ctx(), target)).toEqual({ found: true, externalId: copy?.ids[0] });
    const missing = { ...target, content: { ...target.content, data: { orderId: 'B-3' } } };
    expect(await provider.lookup('other', ctx(), missing)).toEqual({ found: false });
    await provider.close();
  });

  it('lookup follows pages and finds a free-form copy; a template without its text makes other messages "no verdict"', async () => {
    const provider = make(api, { sessionWindow: 'check' });
    const to = 'whatsapp:+4915112340006';
    api.inbound(to, FROM);
    const since = Date.now() - 1_000;
    const first = request(to);
    const sent = await provider.send(first, ctx());
    for (let i = 0; i < 60; i++) await provider.send(request(to), ctx());
    const target = { recipient: to, since, content: { route: 'shop', text: first.text, subject: first.subject, data: {} } };
    expect(await provider.lookup(first.operationKey, ctx(), target)).toEqual({ found: true, externalId: sent.externalId });
    const lists = api.others.filter((o) => o.path.includes('To=whatsapp'));
    expect(lists.some((o) => o.path.includes('Page=1'))).toBe(true);
    const orders = { ...target, content: { ...target.content, route: 'orders', text: 'never sent' } };
    expect(await caught(provider.lookup('x', ctx(), orders))).toMatchObject({ name: 'RetryableError', code: 'LOOKUP_AMBIGUOUS' });
    expect(await provider.lookup('x', ctx(), { ...orders, recipient: '+4915112340099' })).toEqual({ found: false });
    await provider.close();
  });
});
