import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caught, ctx, request } from '@singleshot/test-fault-matrix';
import { FAKE_SLACK_HISTORY_PAGE, startFakeSlack, type FakeProviderApi } from '@singleshot/test-harness';
import { SlackProvider } from './slack-provider';

// Reconciling an in-doubt Slack post: the copy is found by the operation key in
// its metadata, in the recipient's conversation since the first arrival.
describe('slack lookup (lookup: true)', () => {
  let api: FakeProviderApi;
  let provider: SlackProvider;
  const since = Date.now();
  beforeAll(async () => {
    api = await startFakeSlack();
    provider = new SlackProvider({ type: 'slack', name: 'slack', token: 'xoxb-test', endpoint: `${api.origin}/api`, lookup: true, timeoutMs: 5_000 });
  });
  afterAll(async () => {
    await provider.close();
    await api.close();
  });

  it('finds a post whose answer was lost, and says not found for one Slack never took', async () => {
    const taken = request('C0LOOKUP01');
    api.scriptFor('C0LOOKUP01', 'accept-then-drop');
    expect((await caught(provider.send(taken, ctx()))).name).toBe('InDoubtError');
    const found = await provider.lookup?.(taken.operationKey, ctx(), { recipient: 'C0LOOKUP01', since });
    expect(found).toEqual({ found: true, externalId: api.accepted.get(taken.operationKey)?.ids[0] });

    const lost = request('C0LOOKUP01');
    api.scriptFor('C0LOOKUP01', 'reset');
    expect((await caught(provider.send(lost, ctx()))).name).toBe('InDoubtError');
    expect(await provider.lookup?.(lost.operationKey, ctx(), { recipient: 'C0LOOKUP01', since })).toEqual({ found: false });
  });

  it('follows the history cursor, and looks a user recipient up in the app\'s DM', async () => {
    const target = request('U0LOOKUP02');
    await provider.send(target, ctx());
    // Newer messages push the copy past the first pages.
    for (let i = 0; i < FAKE_SLACK_HISTORY_PAGE * 2; i++) await provider.send(request('U0LOOKUP02'), ctx());
    const before = api.others.length;
    expect(await provider.lookup?.(target.operationKey, ctx(), { recipient: 'U0LOOKUP02', since })).toEqual({ found: true, externalId: api.accepted.get(target.operationKey)?.ids[0] });
    const calls = api.others.slice(before).map((o) => o.path);
    expect(calls[0]).toBe('/api/conversations.open');
    expect(calls.filter((p) => p === '/api/conversations.history').length).toBe(3);
  });

  it('never guesses: no target, or a failing history call, is retryable', async () => {
    expect(await caught(provider.lookup?.(request('C0').operationKey, ctx()) as Promise<unknown>)).toMatchObject({ name: 'RetryableError', code: 'LOOKUP_NO_TARGET' });
    const denied = new SlackProvider({ type: 'slack', name: 'denied', token: 'xoxb-test', endpoint: `${api.origin}/api`, lookup: true });
    await api.down();
    try {
      expect(await caught(denied.lookup?.('k', ctx(), { recipient: 'C0LOOKUP03', since }) as Promise<unknown>)).toMatchObject({ name: 'RetryableError', code: 'LOOKUP_ECONNREFUSED' });
    } finally {
      await api.up();
      await denied.close();
    }
  });

  it('without lookup: true there is no lookup (an in-doubt post stays pinned)', async () => {
    const plain = new SlackProvider({ type: 'slack', name: 'plain', token: 'xoxb-test', endpoint: `${api.origin}/api` });
    expect(plain.lookup).toBeUndefined();
    await plain.close();
  });
});
