import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PermanentError, RetryableError } from '@singleshot/core';
import { caught, ctx, faultMatrix, request } from '@singleshot/test-fault-matrix';
import { type FakeProviderApi, startFakeTwilio } from '@singleshot/test-harness';
import { TwilioSmsProvider } from './twilio-sms-provider';

const SID = `AC${'0123456789abcdef'.repeat(2)}`;
const make = (api: FakeProviderApi, timeoutMs: number) =>
  new TwilioSmsProvider({ type: 'twilio-sms', name: 'twilio', accountSid: SID, authToken: 'token', from: '+14155550100', endpoint: api.origin, timeoutMs });

faultMatrix({ label: 'twilio-sms', start: startFakeTwilio, provider: make, recipient: '+14155550199', keyOf: (r) => `${r.recipient}\n${r.text}` });

describe('twilio-sms: request shape', () => {
  let api: FakeProviderApi;
  beforeAll(async () => {
    api = await startFakeTwilio();
  });
  afterAll(() => api.close());

  it('posts the form the Messages API documents with basic auth; sid is the external id', async () => {
    const provider = make(api, 5_000);
    const req = request('+14155550123');
    const result = await provider.send(req, ctx());
    const seen = api.requests.at(-1);
    expect(seen?.path).toBe(`/2010-04-01/Accounts/${SID}/Messages.json`);
    expect(seen?.body).toMatchObject({ To: '+14155550123', From: '+14155550100', Body: req.text });
    expect(result.externalId).toMatch(/^SM[0-9a-f]{32}$/);
    expect(result.externalId).toBe(api.accepted.get(`${req.recipient}\n${req.text}`)?.ids[0]);
    await provider.close();
  });

  it('classifies by the Twilio error code: 21610 (unsubscribed) permanent, 20429 retryable with Retry-After', async () => {
    const provider = make(api, 5_000);
    api.script({ status: 400, body: { code: 21610, message: 'Attempt to send to unsubscribed recipient', status: 400 } });
    const stop = await caught(provider.send(request('+14155550124'), ctx()));
    expect(stop).toBeInstanceOf(PermanentError);
    expect(stop.code).toBe('TWILIO_21610');
    api.script({ status: 429, headers: { 'retry-after': '7' }, body: { code: 20429, message: 'Too Many Requests', status: 429 } });
    const slow = await caught(provider.send(request('+14155550124'), ctx()));
    expect(slow).toBeInstanceOf(RetryableError);
    expect((slow as RetryableError).retryAfterMs).toBe(7_000);
    await provider.close();
  });

  it('a 201 without a sid is in doubt', async () => {
    const provider = make(api, 5_000);
    api.script({ status: 201, body: { status: 'queued' } });
    expect(await caught(provider.send(request('+14155550125'), ctx()))).toMatchObject({ code: 'NO_PROVIDER_ID' });
    await provider.close();
  });
});
