import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRawMail } from '@singleshot/mail';
import { operationKey, parseAction } from '@singleshot/core';
import {
  spawnApps,
  startSmtpSink,
  startTestRedis,
  testConfig,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type SmtpSink,
  type TestRedis,
} from '@singleshot/test-harness';

// A raw MIME mail posted twice to the generic inbound endpoint makes one SMTP
// message to the mailbox owner, whose Message-ID is built from the operation key
// (so a resent copy would carry the same id).
describe('raw MIME inbound → SMTP', () => {
  let redis: TestRedis;
  let smtp: SmtpSink;
  let fleet: AppProcess;
  let base: string;
  let cleanup: () => void;

  beforeAll(async () => {
    redis = await startTestRedis();
    smtp = await startSmtpSink();
    const config = testConfig({
      redisUrl: redis.url,
      mailboxes: [{ id: 'support', owner: 'owner@example.test' }],
      routes: [{ name: 'support-mail', match: { source: 'mail', mailbox: 'support' }, action: 'notify_owner', channel: 'email', template: { subject: 'New mail: {{mail.subject}}', text: 'From {{mail.from}}: {{mail.subject}}' } }],
      providers: { email: [{ name: 'relay', type: 'smtp', host: '127.0.0.1', port: smtp.port, secure: false, from: 'singleshot@example.test' }] },
    });
    const written = writeConfigFile(config);
    cleanup = written.cleanup;
    fleet = spawnApps('ingest,decision,delivery', written.file);
    base = `http://127.0.0.1:${await fleet.metricsPort()}`;
  });

  afterAll(async () => {
    await fleet?.stop();
    await smtp?.close();
    await redis?.destroy();
    cleanup?.();
  });

  it('posting the same mail twice gives one SMTP message with Message-ID <operation key@domain>', async () => {
    const raw = Buffer.from(
      [
        'From: Alice <alice@example.com>',
        'To: support@example.test',
        'Subject: Invoice 42',
        'Date: Mon, 30 Nov 2026 10:00:00 +0000',
        'Message-ID: <invoice-42@mail.example.com>',
        'Content-Type: text/plain; charset=utf-8',
        '',
        'Please find the invoice attached.',
        '',
      ].join('\r\n'),
    );
    const send = () => fetch(`${base}/v1/mail/inbound?mailbox=support`, { method: 'POST', headers: { 'content-type': 'message/rfc822' }, body: raw });
    const [first, second] = [await send(), await send()];
    expect([first.status, second.status]).toEqual([202, 202]);
    expect([((await first.json()) as { status: string }).status, ((await second.json()) as { status: string }).status]).toEqual(['accepted', 'duplicate']);

    const { messageKey } = await parseRawMail(raw, { mailboxId: 'support' });
    const opKey = operationKey({ messageKey, action: parseAction('notify_owner'), recipient: 'owner@example.test', channel: 'email' });
    await waitUntil(() => smtp.messages.length >= 1, 'the SMTP message', { timeoutMs: 60_000 });
    // A third post after delivery must not produce a second message either.
    expect(((await (await send()).json()) as { status: string }).status).toBe('duplicate');
    await waitUntil(async () => (await fleet.metric('singleshot_deliveries_total', { result: 'sent' })) >= 1, 'the sent metric');
    expect(smtp.messages).toHaveLength(1);
    const message = smtp.messages[0]!;
    expect(message.messageId).toBe(`<${opKey}@example.test>`);
    expect(message.envelope.to).toEqual(['owner@example.test']);
    expect(message.raw).toContain('Subject: New mail: Invoice 42');
  });
});
