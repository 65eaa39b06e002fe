import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InDoubtError, RetryableError } from '@singleshot/core';
import { caught, ctx, faultMatrix, request } from '@singleshot/test-fault-matrix';
import { type FakeProviderApi, startFakeSlack } from '@singleshot/test-harness';
import { SLACK_EVENT_TYPE, SlackProvider } from './slack-provider';

const make = (api: FakeProviderApi, timeoutMs: number) =>
  new SlackProvider({ type: 'slack', name: 'slack', token: 'xoxb-test', endpoint: `${api.origin}/api`, timeoutMs });

faultMatrix({ label: 'slack', start: startFakeSlack, provider: make, recipient: 'C0123456789', keyOf: (r) => r.operationKey });

describe('slack: request shape', () => {
  let api: FakeProviderApi;
  beforeAll(async () => {
    api = await startFakeSlack();
  });
  afterAll(() => api.close());

  it('posts to a channel or a user id with the operation key in metadata; ts is the external id', async () => {
    const provider = make(api, 5_000);
    for (const recipient of ['C0123456789', 'U0123456789']) {
      const req = request(recipient);
      const result = await provider.send(req, ctx());
      const seen = api.requests.at(-1);
      expect(seen?.headers.authorization).toBe('Bearer xoxb-test');
      expect(seen?.body).toMatchObject({ channel: recipient, metadata: { event_type: SLACK_EVENT_TYPE, event_payload: { operation_key: req.operationKey } } });
      expect(result.externalId).toBe(api.accepted.get(req.operationKey)?.ids[0]);
    }
    await provider.close();
  });

  it('ok:false errors by their string: ratelimited retries after Retry-After, fatal_error is in doubt', async () => {
    const provider = make(api, 5_000);
    api.script({ status: 429, headers: { 'retry-after': '3' }, body: { ok: false, error: 'ratelimited' } });
    const slow = await caught(provider.send(request('C0123456780'), ctx()));
    expect(slow).toBeInstanceOf(RetryableError);
    expect((slow as RetryableError).retryAfterMs).toBe(3_000);
    api.script({ status: 200, body: { ok: false, error: 'fatal_error' } });
    const fatal = await caught(provider.send(request('C0123456780'), ctx()));
    expect(fatal).toBeInstanceOf(InDoubtError);
    expect(fatal.code).toBe('SLACK_FATAL_ERROR');
    await provider.close();
  });
});
