import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { simpleParser } from 'mailparser';
import { startSmtpSink, type SmtpSink } from '@singleshot/test-harness';
import { createProvider } from './create-provider';
import type { Provider, SendRequest } from './provider';

// Email with an HTML body and documents, against a real smtp-server sink.
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
let sink: SmtpSink;
let provider: Provider;

function request(overrides: Partial<SendRequest>): SendRequest {
  return {
    operationKey: createHash('sha256').update(JSON.stringify(overrides)).digest('hex'),
    messageKey: 'm',
    recipient: 'buyer@example.test',
    channel: 'email',
    subject: 'PO 7',
    text: 'Your order <7>',
    data: {},
    ...overrides,
  };
}

beforeAll(async () => {
  sink = await startSmtpSink();
  provider = createProvider({ name: 'relay', type: 'smtp', host: '127.0.0.1', port: sink.port, secure: false, from: 'shop@example.test', timeoutMs: 5000 });
});

afterAll(async () => {
  await provider?.close();
  await sink?.close();
});

describe('SMTP: multipart text + HTML, attachments, links', () => {
  it('sends text and HTML as multipart/alternative with the attachment byte for byte', async () => {
    const pdf = Buffer.from('%PDF-1.3 fake bytes \x00\x01\x02', 'latin1');
    await provider.send(
      request({ html: '<p>Your order &lt;7&gt;</p>', attachments: [{ fileName: 'po-7.pdf', contentType: 'application/pdf', content: pdf }] }),
      { signal: new AbortController().signal, timeoutMs: 5000 },
    );
    const raw = sink.messages.at(-1)?.raw ?? '';
    expect(raw).toContain('multipart/alternative');
    const mail = await simpleParser(raw);
    expect(mail.text?.trim()).toBe('Your order <7>');
    expect(mail.html).toContain('<p>Your order &lt;7&gt;</p>');
    expect(mail.attachments).toHaveLength(1);
    expect(mail.attachments[0]?.filename).toBe('po-7.pdf');
    expect(mail.attachments[0]?.contentType).toBe('application/pdf');
    expect(sha(mail.attachments[0]?.content as Buffer)).toBe(sha(pdf));
  });

  it('a document too large to attach goes out as a link line in the text', async () => {
    const url = 'http://127.0.0.1:8080/v1/documents/abc/po.pdf?expires=1&sig=x';
    await provider.send(
      request({ documents: [{ name: 'po', fileName: 'po.pdf', contentType: 'application/pdf', size: 9e6, checksum: 'c', url, expiresAt: '2026-12-08T00:00:00.000Z', attached: false }] }),
      { signal: new AbortController().signal, timeoutMs: 5000 },
    );
    const mail = await simpleParser(sink.messages.at(-1)?.raw ?? '');
    expect(mail.attachments).toHaveLength(0);
    expect(mail.text).toContain(`po.pdf: ${url} (link valid until 2026-12-08T00:00:00.000Z)`);
  });
});
