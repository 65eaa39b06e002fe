import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simpleParser } from 'mailparser';
import { parseConfig } from '@singleshot/config';
import { startDecision, type DecisionApp } from '@singleshot/decision';
import { startDelivery, type DeliveryApp } from '@singleshot/delivery';
import { startIngest, type IngestApp } from '@singleshot/ingest';
import { startRender, type RenderApp } from '@singleshot/render';
import { createRuntime, type Runtime } from '@singleshot/runtime';
import {
  freePort,
  startHttpSink,
  startSmtpSink,
  startTestRedis,
  startTestS3,
  testConfig,
  waitUntil,
  type HttpSink,
  type SmtpSink,
  type TestRedis,
  type TestS3,
} from '@singleshot/test-harness';
import { orderEvent, sha, templateDir } from './support/documents';

// Links instead of bytes: webhook payloads carry a signed, time-limited link;
// an email whose document is past maxAttachmentBytes carries one in its text.
// Documents are kept in S3 (a real s3rver) and served by ingest.
let redis: TestRedis;
let s3: TestS3;
let smtp: SmtpSink;
let http: HttpSink;
let rt: Runtime;
let apps: { ingest: IngestApp; decision: DecisionApp; render: RenderApp; delivery: DeliveryApp };
let tpl: ReturnType<typeof templateDir>;
let base: string;

type Link = { name: string; fileName: string; contentType: string; size: number; checksum: string; url: string; expiresAt: string };

beforeAll(async () => {
  [redis, s3, smtp, http] = await Promise.all([startTestRedis(), startTestS3(), startSmtpSink(), startHttpSink()]);
  tpl = templateDir();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const documents = [{ name: 'purchase-order', template: tpl.template, fileName: 'PO-{{data.orderId}}.pdf' }];
  const config = parseConfig(
    testConfig({
      redisUrl: redis.url,
      ingest: { port, host: '127.0.0.1' },
      routes: [
        { name: 'mail', match: { type: 'order.created' }, action: 'notify', channel: 'email', recipients: ['big@example.test'], template: { subject: 'PO {{data.orderId}}', text: 'See the link.' }, documents },
        { name: 'hook', match: { type: 'order.created' }, action: 'notify', channel: 'webhook', recipients: ['erp'], template: { subject: 'PO {{data.orderId}}', text: 'PO' }, documents },
      ],
      providers: {
        email: [{ name: 'relay', type: 'smtp', host: '127.0.0.1', port: smtp.port, secure: false, from: 'orders@example.test' }],
        webhook: [{ name: 'erp', type: 'http', url: http.url, lookupUrl: http.lookupUrl }],
      },
      documents: {
        store: { type: 's3', bucket: s3.bucket, prefix: 'docs/', endpoint: s3.endpoint, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
        maxAttachmentBytes: 100,
        links: { baseUrl: base, ttlSeconds: 3600 },
        waitPollMs: 300,
      },
    }),
  );
  rt = await createRuntime(config, { app: 'documents-links' });
  apps = { delivery: startDelivery(rt), render: startRender(rt), decision: startDecision(rt), ingest: await startIngest(rt, { pollers: false }) };
});

afterAll(async () => {
  await apps?.ingest.close();
  await apps?.decision.close();
  await apps?.render.close();
  await apps?.delivery.close();
  await rt?.close();
  await Promise.all([smtp?.close(), http?.close(), s3?.close()]);
  await redis?.destroy();
  tpl?.cleanup();
});

describe('document links', () => {
  it('the webhook payload and the too-large email carry the same signed link to the one stored document', async () => {
    const res = await fetch(`${base}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(orderEvent('PO-L', ['ignored'])) });
    expect(res.status).toBe(202);
    await waitUntil(() => http.requests.length >= 1 && smtp.taken().length >= 1, 'the webhook call and the email', { timeoutMs: 60_000 });

    const links = (http.requests[0]?.body as { documents?: Link[] }).documents ?? [];
    expect(links).toEqual([expect.objectContaining({ name: 'purchase-order', fileName: 'PO-PO-L.pdf', contentType: 'application/pdf' })]);
    const link = links[0] as Link;
    expect(link.url.startsWith(`${base}/v1/documents/`)).toBe(true);
    const pdf = Buffer.from(await (await fetch(link.url)).arrayBuffer());
    expect(sha(pdf)).toBe(link.checksum);
    expect(pdf.length).toBe(link.size);
    expect(pdf.length).toBeGreaterThan(100);

    const mail = await simpleParser(smtp.taken()[0]?.raw ?? '');
    expect(mail.attachments).toHaveLength(0);
    const inText = /PO-PO-L\.pdf: (\S+) \(link valid until/.exec(mail.text ?? '')?.[1] as string;
    expect(sha(Buffer.from(await (await fetch(inText)).arrayBuffer()))).toBe(link.checksum);

    // A forged signature, or a link stretched past its expiry, is refused.
    expect((await fetch(link.url.replace(/sig=[^&]+/, 'sig=AAAA'))).status).toBe(403);
    expect((await fetch(link.url.replace(/expires=\d+/, 'expires=9999999999'))).status).toBe(403);
    expect(http.requests).toHaveLength(1);
    expect(smtp.taken()).toHaveLength(1);
  });
});
