import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caught, ctx, faultMatrix, request } from '@singleshot/test-fault-matrix';
import { type FakeProviderApi, startFakeSes } from '@singleshot/test-harness';
import { SES_OPERATION_TAG, SesProvider } from './ses-provider';
import type { SendRequest } from './provider';

const make = (api: FakeProviderApi, timeoutMs: number) =>
  new SesProvider({
    type: 'ses',
    name: 'ses',
    region: 'eu-west-1',
    endpoint: api.origin,
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
    from: 'Shop <orders@example.test>',
    timeoutMs,
  });

faultMatrix({ label: 'ses', start: startFakeSes, provider: make, recipient: 'a@example.test', keyOf: (r: SendRequest) => r.operationKey });

describe('ses: request shape', () => {
  let api: FakeProviderApi;
  beforeAll(async () => {
    api = await startFakeSes();
  });
  afterAll(() => api.close());

  it('signs with SigV4 and carries the operation key as a tag and a header; MessageId is the external id', async () => {
    const provider = make(api, 5_000);
    const req = request('b@example.test');
    const result = await provider.send(req, ctx());
    const seen = api.requests.at(-1);
    expect(String(seen?.headers.authorization)).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/ses\/aws4_request/);
    const body = seen?.body as { EmailTags: unknown; Content: { Simple: { Headers: unknown } }; Destination: unknown; FromEmailAddress: string };
    expect(body.EmailTags).toEqual([{ Name: SES_OPERATION_TAG, Value: req.operationKey }]);
    expect(body.Content.Simple.Headers).toEqual([{ Name: 'X-Singleshot-Operation', Value: req.operationKey }]);
    expect(body.Destination).toEqual({ ToAddresses: ['b@example.test'] });
    expect(result.externalId).toBe(api.accepted.get(req.operationKey)?.ids[0]);
    expect('lookup' in provider).toBe(false);
    await provider.close();
  });

  it('a 200 without MessageId is in doubt, not sent', async () => {
    const provider = make(api, 5_000);
    api.script({ status: 200, body: {} });
    await expect(provider.send(request('c@example.test'), ctx())).rejects.toMatchObject({ code: 'NO_PROVIDER_ID' });
    await provider.close();
  });

  it('no region anywhere: retryable and safe to fall back, nothing sent', async () => {
    const saved = { region: process.env.AWS_REGION, fallback: process.env.AWS_DEFAULT_REGION, config: process.env.AWS_CONFIG_FILE };
    delete process.env.AWS_REGION;
    delete process.env.AWS_DEFAULT_REGION;
    process.env.AWS_CONFIG_FILE = '/nonexistent/aws-config';
    try {
      const before = api.requests.length;
      const provider = new SesProvider({ type: 'ses', name: 'ses', endpoint: api.origin, credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }, from: 'a@example.test' });
      const err = await caught(provider.send(request('d@example.test'), ctx()));
      expect(err).toMatchObject({ name: 'RetryableError', code: 'AWS_CONFIG_UNAVAILABLE', safeToFallback: true });
      expect(api.requests.length).toBe(before);
      await provider.close();
    } finally {
      for (const [k, v] of [['AWS_REGION', saved.region], ['AWS_DEFAULT_REGION', saved.fallback], ['AWS_CONFIG_FILE', saved.config]] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });
});
