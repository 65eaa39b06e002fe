import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RetryableError } from '@singleshot/core';
import { caught, ctx, faultMatrix, request } from '@singleshot/test-fault-matrix';
import { type FakeProviderApi, startFakeSendgrid } from '@singleshot/test-harness';
import { SENDGRID_OPERATION_ARG, SendgridProvider } from './sendgrid-provider';

const make = (api: FakeProviderApi, timeoutMs: number) =>
  new SendgridProvider({ type: 'sendgrid', name: 'sendgrid', apiKey: 'SG.test', from: 'orders@example.test', fromName: 'Shop', endpoint: api.origin, timeoutMs });

faultMatrix({ label: 'sendgrid', start: startFakeSendgrid, provider: make, recipient: 'a@example.test', keyOf: (r) => r.operationKey });

describe('sendgrid: request shape', () => {
  let api: FakeProviderApi;
  beforeAll(async () => {
    api = await startFakeSendgrid();
  });
  afterAll(() => api.close());

  it('puts the operation key in custom_args; X-Message-Id is the external id', async () => {
    const provider = make(api, 5_000);
    const req = request('b@example.test');
    const result = await provider.send(req, ctx());
    const seen = api.requests.at(-1);
    expect(seen?.headers.authorization).toBe('Bearer SG.test');
    const body = seen?.body as Record<string, unknown>;
    expect(body.custom_args).toMatchObject({ [SENDGRID_OPERATION_ARG]: req.operationKey });
    expect(body.from).toEqual({ email: 'orders@example.test', name: 'Shop' });
    expect(body.personalizations).toEqual([{ to: [{ email: 'b@example.test' }] }]);
    expect(result.externalId).toBe(api.accepted.get(req.operationKey)?.ids[0]);
    await provider.close();
  });

  it('a 202 without X-Message-Id is in doubt; a 429 carries the X-RateLimit-Reset delay', async () => {
    const provider = make(api, 5_000);
    api.script({ status: 202 });
    expect(await caught(provider.send(request('c@example.test'), ctx()))).toMatchObject({ code: 'NO_PROVIDER_ID' });
    api.script({ status: 429, headers: { 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 30) }, body: { errors: [{ message: 'too many requests' }] } });
    const throttled = await caught(provider.send(request('c@example.test'), ctx()));
    expect(throttled).toBeInstanceOf(RetryableError);
    expect((throttled as RetryableError).retryAfterMs).toBeGreaterThan(20_000);
    await provider.close();
  });
});
