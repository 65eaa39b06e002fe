import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '@singleshot/core';
import { parseConfig } from '@singleshot/config';
import { parsePostmarkEvent } from '@singleshot/providers';
import { createRuntime, type Runtime } from '@singleshot/runtime';
import { FeedbackStore, Suppressions } from '@singleshot/store';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { startIngest, type IngestApp } from '../server';

/**
 * Provider event ids beyond 2^53 and the suppressions their verdicts write,
 * through a real ingest (with its own suppression wiring) on a real
 * redis-server. Postmark's bounce `ID` is a 64-bit integer in the JSON; of the
 * other feedback providers, SES, SendGrid and Mailgun send their ids as
 * strings and Twilio posts a form, so none of theirs is a JSON number.
 */
const FIXTURE = readFileSync(join(__dirname, '../../../../test/fixtures/feedback/postmark-bounce.json'), 'utf8');
const AUTH = { 'content-type': 'application/json', authorization: `Basic ${Buffer.from('pm:pm-secret').toString('base64')}` };

/** A Postmark Bounce webhook body with its `ID` written as the digits given (a JSON number, as Postmark sends it). */
function bounce(op: string, id: string, type: string, email: string): string {
  const body = FIXTURE.replace('"ID": 4323372036854775807', `"ID": ${id}`).replace('"Type": "HardBounce"', `"Type": "${type}"`).replace('alice@example.net', email).replaceAll('__OP__', op);
  if (!body.includes(`"ID": ${id},`) || !body.includes(`"Type": "${type}"`)) throw new Error('the fixture changed: the bounce template no longer applies');
  return body;
}

let redis: TestRedis;
let rt: Runtime;
let ingest: IngestApp;
let store: FeedbackStore;
let suppressions: Suppressions;

beforeAll(async () => {
  redis = await startTestRedis();
  const config = parseConfig({ redis: { url: redis.url }, log: { level: 'silent' }, feedback: { postmark: { username: 'pm', password: 'pm-secret' } } });
  rt = await createRuntime(config, { app: 'test' });
  ingest = await startIngest(rt, { port: 0, host: '127.0.0.1', pollers: false });
  store = new FeedbackStore(rt.redis, rt.keys, { retentionMs: rt.retentionMs });
  suppressions = new Suppressions(rt.redis, rt.keys, { retentionMs: rt.retentionMs });
});

afterAll(async () => {
  await ingest?.close();
  await rt?.close();
  await redis?.destroy();
});

/** A sent operation, recorded by the real claim and commit scripts. */
async function sentOperation(name: string, recipient: string): Promise<string> {
  const operationKey = sha256Hex(`feedback-wide-ids:${name}`);
  const data = { operationKey, messageKey: sha256Hex(`msg:${name}`), recipient, channel: 'email' };
  const claim = await rt.operations.claim({ ...data, owner: 'test', leaseMs: 60_000 });
  if (claim.kind !== 'go') throw new Error(`claim: ${claim.kind}`);
  await rt.operations.commit({ ...data, fence: claim.fence, outcome: 'sent', provider: 'postmark-smtp', externalId: `ext-${name}` });
  return operationKey;
}

async function post(body: string): Promise<{ status: number; body: Record<string, number> }> {
  const res = await fetch(`http://127.0.0.1:${ingest.port}/v1/feedback/postmark`, { method: 'POST', body, headers: AUTH });
  return { status: res.status, body: (await res.json()) as Record<string, number> };
}

const suppressionsOf = async (recipient: string) => (await suppressions.get(recipient)).suppressions.map(({ channel, reason, origin, by }) => ({ channel, reason, origin, by }));

describe('feedback ids beyond 2^53', () => {
  it('Postmark: two bounces whose ids round to one double are two events, and only the hard one suppresses', async () => {
    const op = await sentOperation('pm-wide', 'alice@example.net');
    expect(await post(bounce(op, '4323372036854775807', 'SoftBounce', 'alice@example.net'))).toEqual({ status: 200, body: { recorded: 1, duplicate: 0, unmatched: 0, ignored: 0 } });
    expect(await post(bounce(op, '4323372036854775806', 'HardBounce', 'alice@example.net'))).toEqual({ status: 200, body: { recorded: 1, duplicate: 0, unmatched: 0, ignored: 0 } });
    // Postmark's retries of both change nothing.
    expect((await post(bounce(op, '4323372036854775806', 'HardBounce', 'alice@example.net'))).body).toMatchObject({ recorded: 0, duplicate: 1 });
    expect((await post(bounce(op, '4323372036854775807', 'SoftBounce', 'alice@example.net'))).body).toMatchObject({ recorded: 0, duplicate: 1 });

    const record = await store.read(op);
    expect(record).toMatchObject({ status: 'bounced', hard: true, count: 2 });
    expect(record?.events.map((e) => [e.eventId, e.providerType, e.hard])).toEqual([
      ['Bounce:4323372036854775807', 'SoftBounce', false],
      ['Bounce:4323372036854775806', 'HardBounce', true],
    ]);
    expect(await suppressionsOf('alice@example.net')).toEqual([{ channel: 'email', reason: 'hard_bounce', origin: 'bounce', by: 'feedback:postmark:Bounce:4323372036854775806' }]);
  });

  it('a repeat of an event id that classifies otherwise writes no suppression its recorded event did not', async () => {
    const op = await sentOperation('pm-reused', 'bob@example.net');
    expect((await post(bounce(op, '77', 'SoftBounce', 'bob@example.net'))).body).toMatchObject({ recorded: 1 });
    expect((await post(bounce(op, '77', 'HardBounce', 'bob@example.net'))).body).toMatchObject({ recorded: 0, duplicate: 1 });
    const record = await store.read(op);
    expect(record?.events.map((e) => [e.eventId, e.providerType, e.hard])).toEqual([['Bounce:77', 'SoftBounce', false]]);
    expect(record).toMatchObject({ status: 'bounced', hard: false, count: 1 });
    expect(await suppressionsOf('bob@example.net')).toEqual([]);
  });

  it('a repeat of a recorded hard bounce still writes the suppression its first post did not get to', async () => {
    const op = await sentOperation('pm-retry', 'carol@example.net');
    const body = bounce(op, '88', 'HardBounce', 'carol@example.net');
    // The event stored without its suppression: the first post's suppression write failed and it answered 503.
    const [event] = parsePostmarkEvent(JSON.parse(body)).events;
    expect((await store.record(op, event!)).result).toBe('recorded');
    expect(await suppressionsOf('carol@example.net')).toEqual([]);

    expect((await post(body)).body).toMatchObject({ recorded: 0, duplicate: 1 });
    expect(await suppressionsOf('carol@example.net')).toEqual([{ channel: 'email', reason: 'hard_bounce', origin: 'bounce', by: 'feedback:postmark:Bounce:88' }]);
  });
});
