import { execFileSync } from 'node:child_process';
import { createHmac, createSign, generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '@singleshot/core';
import { parseConfig } from '@singleshot/config';
import { twilioSignature } from '@singleshot/providers';
import { createRuntime, type Runtime } from '@singleshot/runtime';
import { FeedbackStore } from '@singleshot/store';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { startIngest, type IngestApp } from '../server';

/**
 * The feedback endpoints against a real ingest and a real redis-server: every
 * provider's documented payloads, signed here with generated keys, posted
 * three times each in a shuffled order; each event is recorded once and the
 * summary is the same whatever the order. Bad signatures leave no key.
 */
const FIXTURES = join(__dirname, '../../../../test/fixtures/feedback');
const fixture = (name: string, op: string) => readFileSync(join(FIXTURES, name), 'utf8').replaceAll('__OP__', op);

const tmp = mkdtempSync(join(tmpdir(), 'ss-feedback-'));
// An SNS-like signing certificate (the test's own, pinned through feedback.ses.trustedCertificates).
execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=sns.amazonaws.com', '-days', '2', '-keyout', join(tmp, 'k.pem'), '-out', join(tmp, 'c.pem')], { stdio: 'ignore' });
const SNS_KEY = readFileSync(join(tmp, 'k.pem'), 'utf8');
const SNS_CERT = readFileSync(join(tmp, 'c.pem'), 'utf8');
const sendgridKeys = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const SENDGRID_PUBLIC = sendgridKeys.publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
const MAILGUN_KEY = 'mailgun-signing-key-test';
const TWILIO_TOKEN = 'twilio-auth-token-test';
const PUBLIC_TWILIO = 'https://feedback.example.test/v1/feedback/twilio';
const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:ses-feedback';
const CERT_URL = 'https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-test.pem';

let redis: TestRedis;
let rt: Runtime;
let ingest: IngestApp;
let store: FeedbackStore;
const confirmed: string[] = [];
const signals: Array<{ channel: string; recipient: string; reason: string }> = [];

beforeAll(async () => {
  redis = await startTestRedis();
  const config = parseConfig({
    redis: { url: redis.url },
    log: { level: 'silent' },
    feedback: {
      ses: { trustedCertificates: [SNS_CERT], topicArns: [TOPIC] },
      sendgrid: { publicKey: SENDGRID_PUBLIC },
      postmark: { username: 'pm', password: 'pm-secret' },
      mailgun: { signingKey: MAILGUN_KEY },
      twilio: { authToken: TWILIO_TOKEN, publicUrl: PUBLIC_TWILIO },
    },
  });
  rt = await createRuntime(config, { app: 'test' });
  ingest = await startIngest(rt, {
    port: 0,
    host: '127.0.0.1',
    pollers: false,
    feedback: {
      onSuppressionSignal: (channel, recipient, reason) => void signals.push({ channel, recipient, reason }),
      sns: {
        confirmSubscription: async (url) => void confirmed.push(url),
        fetchCertificate: () => Promise.reject(new Error('no network in tests: the pinned certificate must be used')),
      },
    },
  });
  store = new FeedbackStore(rt.redis, rt.keys, { retentionMs: rt.retentionMs });
});

afterAll(async () => {
  await ingest?.close();
  await rt?.close();
  await redis?.destroy();
  rmSync(tmp, { recursive: true, force: true });
});

/** A sent operation, recorded by the real claim and commit scripts. */
async function sentOperation(name: string, recipient: string, channel = 'email', provider = 'mail'): Promise<string> {
  const operationKey = sha256Hex(`feedback-test:${name}`);
  const data = { operationKey, messageKey: sha256Hex(`msg:${name}`), recipient, channel };
  const claim = await rt.operations.claim({ ...data, owner: 'test', leaseMs: 60_000 });
  if (claim.kind !== 'go') throw new Error(`claim: ${claim.kind}`);
  await rt.operations.commit({ ...data, fence: claim.fence, outcome: 'sent', provider, externalId: `ext-${name}` });
  return operationKey;
}

async function post(path: string, body: string, headers: Record<string, string>) {
  const res = await fetch(`http://127.0.0.1:${ingest.port}${path}`, { method: 'POST', body, headers });
  return { status: res.status, body: (await res.json()) as { recorded?: number; error?: { code: string } } };
}

/** Each post three times, in a shuffled order (deterministic: seeded). */
function shuffledThrice<T>(items: T[], seed: number): T[] {
  const all = [...items, ...items, ...items];
  let s = seed;
  for (let i = all.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2147483648;
    const j = s % (i + 1);
    [all[i], all[j]] = [all[j] as T, all[i] as T];
  }
  return all;
}

function snsNotification(message: string, messageId: string, version: '1' | '2' = '2', key = SNS_KEY): string {
  const m: Record<string, string> = { Type: 'Notification', MessageId: messageId, TopicArn: TOPIC, Message: message, Timestamp: '2026-03-01T10:05:01.000Z', SignatureVersion: version, SigningCertURL: CERT_URL };
  const text = ['Message', 'MessageId', 'Timestamp', 'TopicArn', 'Type'].map((k) => `${k}\n${m[k]}\n`).join('');
  m.Signature = createSign(version === '1' ? 'RSA-SHA1' : 'RSA-SHA256').update(text).sign(key, 'base64');
  return JSON.stringify(m);
}

const sns = (body: string) => post('/v1/feedback/ses', body, { 'content-type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': 'Notification' });

function sendgridPost(events: unknown[], key = sendgridKeys.privateKey) {
  const body = JSON.stringify(events);
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = createSign('sha256').update(timestamp + body).sign(key, 'base64');
  return () => post('/v1/feedback/sendgrid', body, { 'content-type': 'application/json', 'x-twilio-email-event-webhook-signature': signature, 'x-twilio-email-event-webhook-timestamp': timestamp });
}

function mailgunPost(eventData: string, key = MAILGUN_KEY, token = randomBytes(25).toString('hex'), timestamp = String(Math.floor(Date.now() / 1000))) {
  const signature = createHmac('sha256', key).update(timestamp + token).digest('hex');
  const body = `{"signature":${JSON.stringify({ timestamp, token, signature })},"event-data":${eventData}}`;
  return post('/v1/feedback/mailgun', body, { 'content-type': 'application/json' });
}

function twilioPost(op: string, fields: Record<string, string>, token = TWILIO_TOKEN) {
  const query = `?op=${op}`;
  const form = new URLSearchParams(fields);
  const signature = twilioSignature(token, PUBLIC_TWILIO + query, [...form.entries()]);
  return post(`/v1/feedback/twilio${query}`, form.toString(), { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature });
}

const postmarkAuth = { 'content-type': 'application/json', authorization: `Basic ${Buffer.from('pm:pm-secret').toString('base64')}` };

async function expectRecord(op: string, status: string, hard: boolean, types: string[]) {
  const record = await store.read(op);
  expect(record?.status).toBe(status);
  expect(record?.hard).toBe(hard);
  expect(record?.events.map((e) => e.type).sort()).toEqual([...types].sort());
  expect(new Set(record?.events.map((e) => e.eventId)).size).toBe(types.length);
}

describe('feedback endpoints (real ingest, real Redis)', () => {
  it('SES via SNS: deliveries, a hard bounce and a complaint, each once (SignatureVersion 1 and 2)', async () => {
    const a = await sentOperation('ses-a', 'alice@example.net');
    const b = await sentOperation('ses-b', 'bob@example.net');
    const posts = [
      snsNotification(fixture('ses-delivery.json', a), 'sns-msg-1', '1'),
      snsNotification(fixture('ses-bounce.json', a), 'sns-msg-2', '2'),
      snsNotification(fixture('ses-complaint.json', b), 'sns-msg-3', '2'),
    ];
    for (const body of shuffledThrice(posts, 7)) expect((await sns(body)).status).toBe(200);
    await expectRecord(a, 'bounced', true, ['delivered', 'bounced']);
    await expectRecord(b, 'complained', false, ['complained']);
    expect(signals).toContainEqual({ channel: 'email', recipient: 'alice@example.net', reason: 'hard_bounce' });
    expect(signals).toContainEqual({ channel: 'email', recipient: 'bob@example.net', reason: 'complaint' });
    const journal = await rt.redis.xrange(rt.keys.journalOf(a), '-', '+');
    expect(journal.filter(([, f]) => f.includes('feedback'))).toHaveLength(2);
  });

  it('SES: a bad signature or a foreign certificate URL is refused with nothing stored', async () => {
    const op = await sentOperation('ses-bad', 'alice@example.net');
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const forged = await sns(snsNotification(fixture('ses-delivery.json', op), 'sns-bad-1', '2', other));
    expect(forged).toMatchObject({ status: 401, body: { error: { code: 'BAD_SIGNATURE' } } });
    const good = JSON.parse(snsNotification(fixture('ses-delivery.json', op), 'sns-bad-2')) as Record<string, string>;
    const tampered = await sns(JSON.stringify({ ...good, Message: good.Message?.replace('Delivery', 'Bounce') }));
    expect(tampered.body.error?.code).toBe('BAD_SIGNATURE');
    const elsewhere = await sns(JSON.stringify({ ...good, SigningCertURL: 'https://sns.eu-west-1.amazonaws.com.evil.test/c.pem' }));
    expect(elsewhere).toMatchObject({ status: 401, body: { error: { code: 'UNTRUSTED_CERTIFICATE_URL' } } });
    expect((await sns(JSON.stringify({ ...good, SigningCertURL: 'http://sns.eu-west-1.amazonaws.com/c.pem' }))).status).toBe(401);
    expect(await rt.redis.exists(rt.keys.feedback(op))).toBe(0);
  });

  it('SES: a SubscriptionConfirmation is confirmed only on an SNS host', async () => {
    const sub = (subscribeUrl: string) => {
      const m: Record<string, string> = { Type: 'SubscriptionConfirmation', MessageId: `sub-${subscribeUrl.length}`, Token: 'tok', TopicArn: TOPIC, Message: 'You have chosen to subscribe', SubscribeURL: subscribeUrl, Timestamp: '2026-03-01T10:00:00.000Z', SignatureVersion: '2', SigningCertURL: CERT_URL };
      const text = ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'].map((k) => `${k}\n${m[k]}\n`).join('');
      m.Signature = createSign('RSA-SHA256').update(text).sign(SNS_KEY, 'base64');
      return sns(JSON.stringify(m));
    };
    const good = 'https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=x&Token=tok';
    expect((await sub(good)).status).toBe(200);
    expect((await sub('https://attacker.example/?Action=ConfirmSubscription')).body.error?.code).toBe('UNTRUSTED_SUBSCRIBE_URL');
    expect(confirmed).toEqual([good]);
  });

  it('SendGrid: signed event batches, each event once; opens ignored; a bad signature stores nothing', async () => {
    const op = await sentOperation('sg-a', 'alice@example.net');
    const events = JSON.parse(fixture('sendgrid-events.json', op)) as unknown[];
    const posts = [sendgridPost(events.slice(0, 2)), sendgridPost([events[2]]), sendgridPost([events[3]])];
    for (const send of shuffledThrice(posts, 11)) expect((await send()).status).toBe(200);
    await expectRecord(op, 'bounced', true, ['accepted', 'delivered', 'bounced']);

    const bad = await sentOperation('sg-bad', 'alice@example.net');
    const forged = sendgridPost(JSON.parse(fixture('sendgrid-events.json', bad)) as unknown[], generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey);
    expect((await forged()).body.error?.code).toBe('BAD_SIGNATURE');
    expect((await post('/v1/feedback/sendgrid', '[]', { 'content-type': 'application/json' })).status).toBe(401);
    expect(await rt.redis.exists(rt.keys.feedback(bad))).toBe(0);
  });

  it('Postmark: delivery, hard bounce and spam complaint once each; wrong basic auth stores nothing', async () => {
    const a = await sentOperation('pm-a', 'alice@example.net', 'email', 'postmark-smtp');
    const b = await sentOperation('pm-b', 'bob@example.net');
    const posts = [fixture('postmark-delivery.json', a), fixture('postmark-bounce.json', a), fixture('postmark-spam.json', b)];
    for (const body of shuffledThrice(posts, 3)) expect((await post('/v1/feedback/postmark', body, postmarkAuth)).status).toBe(200);
    await expectRecord(a, 'bounced', true, ['delivered', 'bounced']);
    await expectRecord(b, 'complained', false, ['complained']);

    const c = await sentOperation('pm-c', 'carol@example.net');
    const wrong = { ...postmarkAuth, authorization: `Basic ${Buffer.from('pm:nope').toString('base64')}` };
    expect((await post('/v1/feedback/postmark', fixture('postmark-delivery.json', c), wrong)).body.error?.code).toBe('UNAUTHORIZED');
    expect(await rt.redis.exists(rt.keys.feedback(c))).toBe(0);
  });

  it('Mailgun: signed events once each (a failure found by its Message-ID); replayed, stale or forged posts store nothing', async () => {
    const op = await sentOperation('mg-a', 'alice@example.net');
    const posts = [fixture('mailgun-delivered.json', op), fixture('mailgun-failed.json', op)];
    // Every redelivery is signed afresh (a new token), as a new webhook call is.
    for (const eventData of shuffledThrice(posts, 5)) expect((await mailgunPost(eventData)).status).toBe(200);
    await expectRecord(op, 'bounced', true, ['delivered', 'bounced']);

    const bad = await sentOperation('mg-bad', 'alice@example.net');
    const data = fixture('mailgun-delivered.json', bad).replace('CPgfbmQMTCKtHW6uIWtuVe', 'another-event-id');
    expect((await mailgunPost(data, 'wrong-key')).body.error?.code).toBe('BAD_SIGNATURE');
    expect((await mailgunPost(data, MAILGUN_KEY, 'tok-old', String(Math.floor(Date.now() / 1000) - 3600))).body.error?.code).toBe('STALE_TIMESTAMP');
    const replayed = await sentOperation('mg-replay', 'alice@example.net');
    const first = await mailgunPost(fixture('mailgun-delivered.json', replayed).replace('CPgfbmQMTCKtHW6uIWtuVe', 'replay-1'), MAILGUN_KEY, 'same-token');
    expect(first.status).toBe(200);
    const again = await mailgunPost(fixture('mailgun-failed.json', replayed).replace('G9Bn5sl1TC6nu79C8C0bwg', 'replay-2'), MAILGUN_KEY, 'same-token');
    expect(again).toMatchObject({ status: 401, body: { error: { code: 'REPLAYED_TOKEN' } } });
    expect(await rt.redis.exists(rt.keys.feedback(bad))).toBe(0);
    await expectRecord(replayed, 'delivered', false, ['delivered']);
  });

  it('Twilio: SMS and WhatsApp status callbacks once per MessageSid + MessageStatus; a bad signature stores nothing', async () => {
    const sms = await sentOperation('tw-sms', '+14155550100', 'sms', 'twilio');
    const wa = await sentOperation('tw-wa', 'whatsapp:+14155550101', 'whatsapp', 'twilio');
    const cb = (status: string, sid: string, extra: Record<string, string> = {}) => ({ MessageSid: sid, SmsSid: sid, MessageStatus: status, SmsStatus: status, AccountSid: 'AC' + '0'.repeat(32), From: '+14155550199', ApiVersion: '2010-04-01', ...extra });
    const posts: Array<[string, Record<string, string>]> = [
      [sms, cb('sent', 'SM001', { To: '+14155550100' })],
      [sms, cb('undelivered', 'SM001', { To: '+14155550100', ErrorCode: '30005' })],
      [wa, cb('delivered', 'MM002', { To: 'whatsapp:+14155550101', ChannelPrefix: 'whatsapp' })],
      [wa, cb('read', 'MM002', { To: 'whatsapp:+14155550101', ChannelPrefix: 'whatsapp' })],
    ];
    for (const [op, fields] of shuffledThrice(posts, 13)) expect((await twilioPost(op, fields)).status).toBe(200);
    await expectRecord(sms, 'failed', true, ['accepted', 'failed']);
    await expectRecord(wa, 'delivered', false, ['delivered', 'delivered']);
    expect(signals).toContainEqual({ channel: 'sms', recipient: '+14155550100', reason: 'hard_bounce' });

    const bad = await sentOperation('tw-bad', '+14155550102', 'sms', 'twilio');
    expect((await twilioPost(bad, cb('delivered', 'SM003'), 'wrong-token')).body.error?.code).toBe('BAD_SIGNATURE');
    // The signature covers the op parameter: moving a signed callback to another operation fails.
    const form = new URLSearchParams(cb('delivered', 'SM004'));
    const signedForSms = twilioSignature(TWILIO_TOKEN, `${PUBLIC_TWILIO}?op=${sms}`, [...form.entries()]);
    const moved = await post(`/v1/feedback/twilio?op=${bad}`, form.toString(), { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signedForSms });
    expect(moved.status).toBe(401);
    expect(await rt.redis.exists(rt.keys.feedback(bad))).toBe(0);
  });

  it('an event for no operation of ours is counted, not refused', async () => {
    const unknown = sha256Hex('never-sent');
    const answer = await post('/v1/feedback/postmark', fixture('postmark-delivery.json', unknown), postmarkAuth);
    expect(answer).toMatchObject({ status: 200, body: { recorded: 0, unmatched: 1 } });
    expect(await rt.redis.exists(rt.keys.feedback(unknown))).toBe(0);
    const metrics = await rt.metrics.registry.getSingleMetricAsString('singleshot_feedback_events_total');
    expect(metrics).toContain('provider="postmark",type="delivered",result="unmatched"');
    expect(metrics).toContain('provider="postmark-smtp",type="bounced",result="recorded"');
  });
});
