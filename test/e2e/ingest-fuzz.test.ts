import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '@singleshot/runtime';
import {
  MAILBOX,
  POSTMARK,
  SENDGRID,
  SIGNING_KEY,
  mailgunSignature,
  multipart,
  spawnApps,
  startTestRedis,
  testConfig,
  urlencoded,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type Body,
  type TestRedis,
} from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';

// Property-based fuzzing of every ingest entry point against a real ingest
// process and a real Redis: every input gets a 2xx or a
// 4xx (a 503 only while Redis is down), the process never dies, and every
// message answered `accepted` has its decide job in Redis.
//
// `npm test` runs FUZZ_RUNS (default 60) cases per property with a fixed seed
// (FUZZ_SEED, default 20261201): a failure names its seed and path, so it
// replays. `npm run test:fuzz` runs 2,000 per property.
const SEED = Number(process.env.FUZZ_SEED ?? 20261201);
const RUNS = Number(process.env.FUZZ_RUNS ?? 60);
const KEY = 'fuzz-producer-key-0123456789abcdef';

let redis: TestRedis;
let ingest: AppProcess;
let rt: Runtime;
let base: string;
let cleanup: () => void;
const accepted = new Set<string>();

beforeAll(async () => {
  redis = await startTestRedis();
  const config = testConfig({
    redisUrl: redis.url,
    ingest: { port: 0, host: '127.0.0.1', maxBodyBytes: 65_536, apiKeys: [{ name: 'fuzz', key: KEY, sources: ['*'] }], rateLimit: { perSecond: 100_000, burst: 100_000 } },
    mailboxes: [{ id: MAILBOX, owner: 'owner@example.test' }],
    webhooks: { mailgun: { signingKey: SIGNING_KEY }, postmark: POSTMARK, sendgrid: SENDGRID },
    providers: { log: [{ type: 'log', name: 'log' }] },
    routes: [{ name: 'all', match: {}, action: 'notify', channel: 'log', recipients: 'event' }],
  });
  const written = writeConfigFile(config);
  cleanup = written.cleanup;
  ingest = spawnApps('ingest', written.file);
  base = `http://127.0.0.1:${await ingest.metricsPort()}`;
  rt = await testRuntime(config);
});

afterAll(async () => {
  await ingest?.stop();
  await rt?.close();
  await redis?.destroy();
  cleanup?.();
});

type Answer = { status: number; json: unknown };

async function send(path: string, body: Body, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    body: body.body as RequestInit['body'],
    headers: { ...(body.contentType ? { 'content-type': body.contentType } : {}), ...headers },
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  const key = (json as { messageKey?: unknown; status?: unknown } | undefined)?.messageKey;
  if (res.status === 202 && typeof key === 'string' && (json as { status?: unknown }).status === 'accepted') accepted.add(key);
  return { status: res.status, json };
}

/** 2xx or 4xx with the error shape; 503 too while Redis is down. */
function expectSane(answer: Answer, redisDown = false): void {
  const ok = (answer.status >= 200 && answer.status < 300 && !redisDown) || (answer.status >= 400 && answer.status < 500) || (redisDown && answer.status === 503);
  expect(ok, `status ${answer.status}: ${JSON.stringify(answer.json).slice(0, 300)}`).toBe(true);
  if (answer.status >= 400) expect(answer.json).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });
}

const auth = { authorization: `Bearer ${KEY}` };
const text = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 40 }), fc.constantFrom('', ' ', 'a\r\nBcc: evil@x', '\u0000', 'mail', '@', '{{data}}'));
const deep = fc.integer({ min: 1, max: 3_000 }).map((d) => '['.repeat(d) + ']'.repeat(d));
/** Bodies that look like events, almost events, or nothing like one. */
const eventBody = fc.oneof(
  fc.record(
    { id: fc.oneof(text, fc.integer()), source: text, type: text, recipients: fc.oneof(fc.array(text, { maxLength: 5 }), text), data: fc.oneof(fc.jsonValue({ maxDepth: 6 }), fc.object()) },
    { requiredKeys: [] },
  ).map((o) => JSON.stringify(o)),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  deep,
  deep.map((d) => `{"id":"x","source":"s","type":"t","data":{"a":${d}}}`),
  fc.string({ maxLength: 200 }),
  fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b).toString('latin1')),
);
const rawBytes = fc.oneof(fc.uint8Array({ maxLength: 2_000 }).map((b) => Buffer.from(b)), fc.string({ maxLength: 500 }).map((s) => Buffer.from(s)));
const headerish = fc.oneof(fc.constantFrom('Message-ID: <x@y>\r\n', 'Subject: =?utf-8?B?////?=\r\n', 'Content-Type: multipart/mixed; boundary=""\r\n', 'From: <>\r\n'), fc.string({ maxLength: 60 }));
const mimeish = fc.tuple(fc.array(headerish, { maxLength: 6 }), fc.string({ maxLength: 300 })).map(([h, b]) => Buffer.from(`${h.join('')}\r\n${b}`));
const fields = fc.dictionary(fc.constantFrom('recipient', 'sender', 'from', 'subject', 'body-mime', 'body-plain', 'message-headers', 'Message-Id', 'email', 'headers', 'text', 'html', 'to', 'charsets', 'x'), fc.oneof(fc.string({ maxLength: 80 }), mimeish.map((m) => m.toString('latin1'))));
const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

describe('fuzzing ingest', () => {
  it('POST /v1/events: every body gets a 2xx or a 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(eventBody, fc.option(text, { nil: undefined }), fc.constantFrom('application/json', 'text/plain', ''), async (body, idem, type) => {
        expectSane(await send('/v1/events', { body, contentType: type || undefined }, { ...auth, ...(idem && !/[\r\n\u0000-\u001f\u007f-\uffff]/.test(idem) ? { 'idempotency-key': idem } : {}) }));
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('POST /v1/mail/inbound (raw MIME): every body gets a 2xx or a 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(rawBytes, mimeish), fc.constantFrom(MAILBOX, 'nope', ''), async (mail, mailbox) => {
        expectSane(await send(`/v1/mail/inbound?mailbox=${mailbox}`, { body: mail, contentType: 'message/rfc822' }, auth));
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('each provider webhook, authenticated, with hostile fields: a 2xx or a 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(fields, mimeish, fc.constantFrom('mailgun', 'postmark', 'sendgrid'), fc.boolean(), async (f, mime, provider, asJson) => {
        if (provider === 'mailgun') {
          expectSane(await send(`/v1/mail/inbound/mailgun?mailbox=${MAILBOX}`, urlencoded({ ...f, 'body-mime': mime, ...mailgunSignature() })));
        } else if (provider === 'postmark') {
          const body = asJson ? JSON.stringify({ ...f, RawEmail: mime.toString('latin1'), Headers: [{ Name: 'Message-ID', Value: f.subject ?? '' }] }) : (f.text ?? '{');
          expectSane(await send(`/v1/mail/inbound/postmark?mailbox=${MAILBOX}`, { body, contentType: 'application/json' }, { authorization: basic(POSTMARK.username, POSTMARK.password) }));
        } else {
          const parts: Array<[string, string | Buffer]> = Object.entries(f);
          if (asJson) parts.push(['email', mime]);
          expectSane(await send(`/v1/mail/inbound/sendgrid?mailbox=${MAILBOX}&token=${SENDGRID.token}`, multipart(parts)));
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('while Redis is down: a 4xx or a 503, never a 2xx; the process stays up and serves again after', async () => {
    await redis.stop();
    try {
      await fc.assert(
        fc.asyncProperty(fc.oneof(eventBody, fc.uuid().map((id) => JSON.stringify({ id, source: 'shop', type: 't', recipients: ['a@example.com'] }))), async (body) => {
          expectSane(await send('/v1/events', { body, contentType: 'application/json' }, auth), true);
        }),
        { seed: SEED, numRuns: Math.min(RUNS, 30) },
      );
    } finally {
      await redis.restart();
    }
    await waitUntil(async () => (await send('/v1/events', { body: JSON.stringify({ id: 'after-outage', source: 'shop', type: 't' }), contentType: 'application/json' }, auth)).status === 202, 'ingest to accept again', { timeoutMs: 30_000 });
  });

  it('the process never crashed, and every accepted message has its decide job', async () => {
    expect(ingest.child.exitCode).toBeNull();
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect(accepted.size).toBeGreaterThan(0);
    const missing: string[] = [];
    for (const key of accepted) if (!(await rt.queues.decide.getJob(key))) missing.push(key);
    expect(missing).toEqual([]);
  });
});
