import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import type { RedisClient } from '@singleshot/store';
import { mailMessageKey } from '@singleshot/core';
import { parseRawMail, type ParsedMail } from '@singleshot/mail';
import { createRedis, KeyBuilder } from '@singleshot/store';
import { startTestRedis, waitUntil, type TestRedis } from '@singleshot/test-harness';
import { serveRoutes } from '../http/serve';
import { IntakeGate } from '../intake-gate';
import type { IngestContext } from '../context';
import { providerWebhookRoutes, type ProviderWebhookDeps } from './provider-webhooks';
import { StoreUnavailableError } from '@singleshot/intake';
import {
  MAIL,
  MAILBOX,
  POSTMARK,
  SENDGRID,
  SIGNING_KEY,
  buildEml,
  mailgunParsed,
  mailgunRaw,
  mailgunSignature,
  postmarkJson,
  sendgridParsed,
  sendgridRaw,
  urlencoded,
  type Body,
} from '@singleshot/test-harness';

// ------------------------------------------------------------ the server
let redisServer: TestRedis;
let redis: RedisClient;
let server: Server;
let base: string;
const keys = new KeyBuilder('twh', 4);
const accepted: Array<{ parsed: ParsedMail; via: string }> = [];
const seen = new Set<string>();
let storeDown = false;

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

function deps(overrides: Partial<ProviderWebhookDeps> = {}): ProviderWebhookDeps {
  return {
    mailboxes: [{ id: MAILBOX, owner: 'owner@example.test' }],
    webhooks: { mailgun: { signingKey: SIGNING_KEY, toleranceSeconds: 300 }, postmark: POSTMARK, sendgrid: SENDGRID },
    acceptMail: async (parsed, via) => {
      if (storeDown) throw new StoreUnavailableError('Redis is unavailable');
      accepted.push({ parsed, via });
      const status = seen.has(parsed.messageKey) ? 'duplicate' : 'accepted';
      seen.add(parsed.messageKey);
      return { messageKey: parsed.messageKey, status };
    },
    redis,
    keys,
    logger: quiet,
    ...overrides,
  };
}

beforeAll(async () => {
  redisServer = await startTestRedis();
  redis = createRedis({ url: redisServer.url, role: 'producer' });
  // A fail-fast producer connection refuses commands until it is ready.
  await waitUntil(() => redis.status === 'ready', 'the producer connection');
  // The routes served by ingest's own HTTP layer; `/small/…` is a second table with a small body limit.
  const serve = (routes: ReturnType<typeof providerWebhookRoutes>) => {
    const ctx = { counters: { request: () => undefined }, logger: quiet, maxBodyBytes: 1024, limits: { maxRequestsInFlight: 100, maxJsonDepth: 32 } };
    return serveRoutes(routes, ctx as unknown as IngestContext, new IntakeGate(ctx as unknown as IngestContext));
  };
  const normal = serve(providerWebhookRoutes(deps()));
  const small = serve(providerWebhookRoutes(deps({ maxBodyBytes: 2048, webhooks: { mailgun: { signingKey: SIGNING_KEY } } })));
  server = createServer((req, res) => {
    if (!req.url?.startsWith('/small/')) return normal(req, res);
    req.url = req.url.slice('/small'.length);
    small(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  redis?.disconnect();
  await redisServer?.destroy();
});

beforeEach(() => {
  accepted.length = 0;
  seen.clear();
  storeDown = false;
});

const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

async function post(path: string, body: Body, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    body: body.body,
    headers: { ...(body.contentType ? { 'content-type': body.contentType } : {}), ...headers },
  });
  const json = (await res.json().catch(() => null)) as { messageKey?: string; status?: string; error?: { code: string } } | null;
  return { status: res.status, json };
}

const mg = (b: Body, mailbox = MAILBOX) => post(`/v1/mail/inbound/mailgun?mailbox=${mailbox}`, b);
const pm = (b: Body, mailbox = MAILBOX) => post(`/v1/mail/inbound/postmark?mailbox=${mailbox}`, b, { authorization: basic(POSTMARK.username, POSTMARK.password) });
const sg = (b: Body, mailbox = MAILBOX) => post(`/v1/mail/inbound/sendgrid?mailbox=${mailbox}&token=${SENDGRID.token}`, b);

describe('one mail through every inbound format', () => {
  for (const variant of [
    { name: 'with a Message-ID', messageId: true },
    { name: 'without a Message-ID (fallback fingerprint)', messageId: false },
    { name: 'HTML-only, without a Message-ID', messageId: false, htmlOnly: true },
  ]) {
    it(`ends in the same message key as the raw MIME (IMAP) path: ${variant.name}`, async () => {
      const eml = buildEml(variant);
      const imapCopy = await parseRawMail(eml, { mailboxId: MAILBOX });
      if (variant.messageId) {
        expect(imapCopy.messageKey).toBe(mailMessageKey(MAILBOX, 'order-42.1709629200@mail.example.test'));
      } else {
        expect(imapCopy.input.identity).toBe('fingerprint');
      }

      const answers = [
        await mg(mailgunRaw(eml)),
        await mg(mailgunParsed(variant)),
        await pm(postmarkJson(variant)),
        await pm(postmarkJson({ ...variant, raw: eml })),
        await sg(sendgridRaw(eml)),
        await sg(sendgridParsed(variant)),
        await post(`/v1/mail/inbound/mailgun/${MAILBOX}/mime`, mailgunRaw(eml)),
      ];
      expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202, 202, 202, 202]);
      expect(answers.map((a) => a.json?.status)).toEqual(['accepted', 'duplicate', 'duplicate', 'duplicate', 'duplicate', 'duplicate', 'duplicate']);
      expect(accepted.map((a) => a.via)).toEqual(['mailgun', 'mailgun', 'postmark', 'postmark', 'sendgrid', 'sendgrid', 'mailgun']);
      expect(new Set(accepted.map((a) => a.parsed.messageKey))).toEqual(new Set([imapCopy.messageKey]));
      // The summaries agree too, not only the keys.
      for (const { parsed } of accepted) {
        expect(parsed.input).toMatchObject({
          mailboxId: MAILBOX,
          identity: imapCopy.input.identity,
          messageId: imapCopy.input.messageId,
          from: `${MAIL.fromName} <${MAIL.fromAddr}>`,
          subject: MAIL.subject,
          date: MAIL.date,
          excerpt: imapCopy.input.excerpt,
        });
      }
    });
  }

  it('never merges two different mails with the same subject and body but different Message-IDs', async () => {
    const a = buildEml({ messageId: true });
    const b = Buffer.from(a.toString().replace(MAIL.messageId, '<order-43@mail.example.test>'));
    const [ra, rb] = [await mg(mailgunRaw(a)), await pm(postmarkJson({ messageId: false, raw: b }))];
    expect([ra.json?.status, rb.json?.status]).toEqual(['accepted', 'accepted']);
    expect(ra.json?.messageKey).not.toBe(rb.json?.messageKey);
  });
});

describe('mailgun signature', () => {
  it('refuses a bad signature, a stale timestamp and a replayed token with 401, queuing nothing', async () => {
    const eml = buildEml({ messageId: true });
    const forged = mailgunSignature(undefined, undefined, 'key-not-the-signing-key');
    const stale = mailgunSignature(Math.floor(Date.now() / 1000) - 600);
    const missing = urlencoded({ 'body-mime': eml, timestamp: String(Math.floor(Date.now() / 1000)) });
    expect(await mg(mailgunRaw(eml, forged))).toMatchObject({ status: 401, json: { error: { code: 'BAD_SIGNATURE' } } });
    expect(await mg(mailgunRaw(eml, stale))).toMatchObject({ status: 401, json: { error: { code: 'STALE_TIMESTAMP' } } });
    expect(await mg(missing)).toMatchObject({ status: 401, json: { error: { code: 'BAD_SIGNATURE' } } });
    const tampered = { ...mailgunSignature(), token: randomBytes(25).toString('hex') };
    expect(await mg(mailgunRaw(eml, tampered))).toMatchObject({ status: 401, json: { error: { code: 'BAD_SIGNATURE' } } });
    expect(accepted).toHaveLength(0);

    const sig = mailgunSignature();
    expect((await mg(mailgunRaw(eml, sig))).status).toBe(202);
    expect(await mg(mailgunRaw(eml, sig))).toMatchObject({ status: 401, json: { error: { code: 'REPLAYED_TOKEN' } } });
    expect(accepted).toHaveLength(1);
    expect(await redis.ttl(keys.webhookToken('mailgun', sig.token))).toBeGreaterThan(600);
  });

  it('answers 503 while the store is down, and frees the token so the same request can be retried', async () => {
    const eml = buildEml({ messageId: true });
    const sig = mailgunSignature();
    storeDown = true;
    expect(await mg(mailgunRaw(eml, sig))).toMatchObject({ status: 503, json: { error: { code: 'STORE_UNAVAILABLE' } } });
    storeDown = false;
    expect(await mg(mailgunRaw(eml, sig))).toMatchObject({ status: 202, json: { status: 'accepted' } });
  });

  it('answers 503 when Redis itself is down (token check), then recovers', async () => {
    const eml = buildEml({ messageId: true });
    await redisServer.stop();
    try {
      await waitUntil(() => redis.status !== 'ready', 'the producer connection to notice');
      expect(await mg(mailgunRaw(eml))).toMatchObject({ status: 503, json: { error: { code: 'STORE_UNAVAILABLE' } } });
    } finally {
      await redisServer.restart();
    }
    await waitUntil(() => redis.status === 'ready', 'the producer connection to come back', { timeoutMs: 30_000 });
    expect((await mg(mailgunRaw(eml))).status).toBe(202);
    expect(accepted).toHaveLength(1);
  });
});

describe('refusals in each provider’s terms', () => {
  it('unknown mailbox: the status that stops each provider’s retries', async () => {
    const eml = buildEml({ messageId: true });
    expect(await mg(mailgunRaw(eml), 'nope')).toMatchObject({ status: 406, json: { error: { code: 'UNKNOWN_MAILBOX' } } });
    expect(await pm(postmarkJson({ messageId: true }), 'nope')).toMatchObject({ status: 403, json: { error: { code: 'UNKNOWN_MAILBOX' } } });
    expect(await sg(sendgridRaw(eml), 'nope')).toMatchObject({ status: 400, json: { error: { code: 'UNKNOWN_MAILBOX' } } });
    expect(accepted).toHaveLength(0);
  });

  it('a body that can never be a mail: 406 / 403 / 400', async () => {
    expect(await mg(urlencoded({ hello: 'world', ...mailgunSignature() }))).toMatchObject({ status: 406, json: { error: { code: 'INVALID_PAYLOAD' } } });
    expect(await pm({ body: '{not json', contentType: 'application/json' })).toMatchObject({ status: 403, json: { error: { code: 'INVALID_PAYLOAD' } } });
    expect(await sg({ body: 'garbage', contentType: 'multipart/form-data; boundary=xyz' })).toMatchObject({ status: 400, json: { error: { code: 'INVALID_PAYLOAD' } } });
    expect(accepted).toHaveLength(0);
  });

  it('postmark and sendgrid without the shared secret: 401', async () => {
    const eml = buildEml({ messageId: true });
    expect((await post(`/v1/mail/inbound/postmark?mailbox=${MAILBOX}`, postmarkJson({ messageId: true }))).status).toBe(401);
    expect((await post(`/v1/mail/inbound/postmark?mailbox=${MAILBOX}`, postmarkJson({ messageId: true }), { authorization: basic('postmark', 'wrong') })).status).toBe(401);
    expect((await post(`/v1/mail/inbound/sendgrid?mailbox=${MAILBOX}`, sendgridRaw(eml))).status).toBe(401);
    expect((await post(`/v1/mail/inbound/sendgrid?mailbox=${MAILBOX}&token=wrong`, sendgridRaw(eml))).status).toBe(401);
    expect(accepted).toHaveLength(0);
    // Basic auth works for SendGrid as well as the URL token.
    const viaBasic = await post(`/v1/mail/inbound/sendgrid?mailbox=${MAILBOX}`, sendgridRaw(eml), { authorization: basic(SENDGRID.username, SENDGRID.password) });
    expect(viaBasic.status).toBe(202);
  });

  it('retryable 503 for postmark and sendgrid while the store is down', async () => {
    storeDown = true;
    expect(await pm(postmarkJson({ messageId: true }))).toMatchObject({ status: 503, json: { error: { code: 'STORE_UNAVAILABLE' } } });
    expect(await sg(sendgridParsed({ messageId: true }))).toMatchObject({ status: 503, json: { error: { code: 'STORE_UNAVAILABLE' } } });
  });

  it('unknown or unconfigured provider: 404; body over the limit: 413', async () => {
    expect(await post(`/v1/mail/inbound/mandrill?mailbox=${MAILBOX}`, { body: '{}', contentType: 'application/json' })).toMatchObject({
      status: 404,
      json: { error: { code: 'UNKNOWN_PROVIDER' } },
    });
    expect(await post(`/small/v1/mail/inbound/postmark?mailbox=${MAILBOX}`, postmarkJson({ messageId: true }), { authorization: basic(POSTMARK.username, POSTMARK.password) })).toMatchObject({
      status: 404,
      json: { error: { code: 'PROVIDER_NOT_CONFIGURED' } },
    });
    expect(await post(`/small/v1/mail/inbound/mailgun?mailbox=${MAILBOX}`, mailgunRaw(buildEml({ messageId: true })))).toMatchObject({
      status: 413,
      json: { error: { code: 'BODY_TOO_LARGE' } },
    });
    expect(accepted).toHaveLength(0);
  });
});
