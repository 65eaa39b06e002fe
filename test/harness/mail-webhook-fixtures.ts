/**
 * One mail in every inbound shape, for provider-webhooks.test.ts: the raw
 * MIME (what IMAP fetches) and each provider's payload of the same mail, as
 * the provider documents it (decoded fields, its own JSON or form layout),
 * written from the values in MAIL, not from our parser.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';

export const SIGNING_KEY = 'key-3ax6xnjp29jd6fds4gc373sgvjxteol0';
export const POSTMARK = { username: 'postmark', password: 'pm-secret' };
export const SENDGRID = { username: 'sendgrid', password: 'sg-secret', token: 'sg-url-token' };
export const MAILBOX = 'support';

export const MAIL = {
  fromName: 'Jörg Müller',
  fromAddr: 'joerg@example.test',
  to: 'support@example.test',
  subject: 'Grüße aus Köln – Bestellung 42',
  date: 'Tue, 05 Mar 2024 10:00:00 +0100',
  messageId: '<order-42.1709629200@Mail.Example.Test>',
  text: 'Hallo,\n\ndie Bestellung 42 ist angekommen. Schöne Grüße!\n\nJörg\n',
  html: '<html><body><p>Hallo,</p><p>die Bestellung 42 ist angekommen. Schöne Grüße!</p><p>Jörg</p></body></html>',
};

function qp(text: string): string {
  const bytes = Buffer.from(text.replace(/\n/g, '\r\n'), 'utf8');
  let out = '';
  for (const b of bytes) out += b === 0x0d || b === 0x0a || (b >= 0x20 && b < 0x7f && b !== 0x3d) ? String.fromCharCode(b) : `=${b.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

export function headerBlock(opts: { messageId: boolean; htmlOnly?: boolean }): string {
  return [
    'Received: from mx.example.test by mail.example.test; Tue, 05 Mar 2024 10:00:01 +0100',
    `From: =?utf-8?Q?J=C3=B6rg_M=C3=BCller?= <${MAIL.fromAddr}>`,
    `To: ${MAIL.to}`,
    `Subject: =?utf-8?B?${Buffer.from(MAIL.subject).toString('base64')}?=`,
    `Date: ${MAIL.date}`,
    ...(opts.messageId ? [`Message-ID: ${MAIL.messageId}`] : []),
    'MIME-Version: 1.0',
    opts.htmlOnly ? 'Content-Type: text/html; charset=utf-8' : 'Content-Type: multipart/alternative; boundary="b1"',
    ...(opts.htmlOnly ? ['Content-Transfer-Encoding: base64'] : []),
  ].join('\r\n');
}

export function buildEml(opts: { messageId: boolean; htmlOnly?: boolean }): Buffer {
  const body = opts.htmlOnly
    ? Buffer.from(MAIL.html).toString('base64')
    : [
        '--b1',
        'Content-Type: text/plain; charset=utf-8',
        'Content-Transfer-Encoding: quoted-printable',
        '',
        qp(MAIL.text),
        '--b1',
        'Content-Type: text/html; charset=utf-8',
        'Content-Transfer-Encoding: base64',
        '',
        Buffer.from(MAIL.html).toString('base64'),
        '--b1--',
        '',
      ].join('\r\n');
  return Buffer.from(`${headerBlock(opts)}\r\n\r\n${body}`);
}

// ------------------------------------------------------- provider shapes
export type Body = { body: Buffer | string | FormData; contentType?: string };

export function urlencoded(fields: Record<string, string | Buffer>): Body {
  const enc = (v: string | Buffer) => (Buffer.isBuffer(v) ? [...v].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('') : encodeURIComponent(v));
  return {
    body: Object.entries(fields).map(([k, v]) => `${encodeURIComponent(k)}=${enc(v)}`).join('&'),
    contentType: 'application/x-www-form-urlencoded',
  };
}

/** multipart/form-data written by hand, so a field can carry non-UTF-8 bytes as SendGrid sends them. */
export function multipart(fields: Array<[string, string | Buffer, string?]>): Body {
  const boundary = `----sgboundary${randomBytes(6).toString('hex')}`;
  const parts = fields.map(([name, value, type]) =>
    Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n${type ? `Content-Type: ${type}\r\n` : ''}\r\n`),
      Buffer.isBuffer(value) ? value : Buffer.from(value),
      Buffer.from('\r\n'),
    ]),
  );
  return { body: Buffer.concat([...parts, Buffer.from(`--${boundary}--\r\n`)]), contentType: `multipart/form-data; boundary=${boundary}` };
}

export function mailgunSignature(timestamp = Math.floor(Date.now() / 1000), token = randomBytes(25).toString('hex'), key = SIGNING_KEY) {
  return { timestamp: String(timestamp), token, signature: createHmac('sha256', key).update(`${timestamp}${token}`).digest('hex') };
}

export function mailgunRaw(eml: Buffer, sig = mailgunSignature()): Body {
  return urlencoded({ recipient: MAIL.to, sender: MAIL.fromAddr, from: `${MAIL.fromName} <${MAIL.fromAddr}>`, subject: MAIL.subject, 'body-mime': eml, ...sig });
}

export function mailgunParsed(opts: { messageId: boolean; htmlOnly?: boolean }, sig = mailgunSignature()): Body {
  const headers: Array<[string, string]> = [
    ['Received', 'from mx.example.test by mail.example.test; Tue, 05 Mar 2024 10:00:01 +0100'],
    ['From', `${MAIL.fromName} <${MAIL.fromAddr}>`],
    ['To', MAIL.to],
    ['Subject', MAIL.subject],
    ['Date', MAIL.date],
    ...(opts.messageId ? ([['Message-Id', MAIL.messageId]] as Array<[string, string]>) : []),
    ['Mime-Version', '1.0'],
    ['Content-Type', opts.htmlOnly ? 'text/html; charset="utf-8"' : 'multipart/alternative; boundary="b1"'],
  ];
  return urlencoded({
    recipient: MAIL.to,
    sender: MAIL.fromAddr,
    from: `${MAIL.fromName} <${MAIL.fromAddr}>`,
    subject: MAIL.subject,
    // HTML-only: Mailgun writes its own text rendering here (documented),
    // which is not what our htmlToText makes of the HTML.
    'body-plain': opts.htmlOnly ? 'Hallo,\ndie Bestellung 42 ist angekommen. Schöne Grüße!\nJörg' : MAIL.text,
    'stripped-text': 'Hallo,\n\ndie Bestellung 42 ist angekommen.',
    'body-html': MAIL.html,
    'message-headers': JSON.stringify(headers),
    ...sig,
  });
}

export function postmarkJson(opts: { messageId: boolean; htmlOnly?: boolean; raw?: Buffer }): Body {
  const json = {
    FromName: MAIL.fromName,
    MessageStream: 'inbound',
    From: MAIL.fromAddr,
    FromFull: { Email: MAIL.fromAddr, Name: MAIL.fromName, MailboxHash: '' },
    To: MAIL.to,
    ToFull: [{ Email: MAIL.to, Name: '', MailboxHash: '' }],
    Cc: '',
    CcFull: [],
    Bcc: '',
    BccFull: [],
    OriginalRecipient: MAIL.to,
    Subject: MAIL.subject,
    // Postmark's own id for the inbound message: NOT the mail's Message-ID.
    MessageID: randomUUID(),
    ReplyTo: '',
    MailboxHash: '',
    Date: MAIL.date,
    TextBody: opts.htmlOnly ? '' : MAIL.text,
    HtmlBody: MAIL.html,
    StrippedTextReply: '',
    Tag: '',
    Headers: [
      { Name: 'X-Spam-Status', Value: 'No' },
      { Name: 'Received', Value: 'from mx.example.test by mail.example.test; Tue, 05 Mar 2024 10:00:01 +0100' },
      ...(opts.messageId ? [{ Name: 'Message-ID', Value: MAIL.messageId }] : []),
      { Name: 'MIME-Version', Value: '1.0' },
    ],
    Attachments: [],
    ...(opts.raw ? { RawEmail: opts.raw.toString('utf8') } : {}),
  };
  return { body: JSON.stringify(json), contentType: 'application/json' };
}

export function sendgridRaw(eml: Buffer): Body {
  // Built with the platform's FormData: the parser must read what undici writes too.
  const form = new FormData();
  form.set('to', MAIL.to);
  form.set('from', `${MAIL.fromName} <${MAIL.fromAddr}>`);
  form.set('subject', MAIL.subject);
  form.set('envelope', JSON.stringify({ to: [MAIL.to], from: MAIL.fromAddr }));
  form.set('charsets', JSON.stringify({ to: 'UTF-8', from: 'UTF-8', subject: 'UTF-8' }));
  form.set('spam_score', '0.1');
  form.set('email', new Blob([eml]));
  return { body: form };
}

export function sendgridParsed(opts: { messageId: boolean; htmlOnly?: boolean }): Body {
  return multipart([
    ['headers', headerBlock(opts) + '\r\n'],
    ['dkim', '{@example.test : pass}'],
    ['to', MAIL.to],
    ['from', `${MAIL.fromName} <${MAIL.fromAddr}>`],
    ['subject', MAIL.subject],
    ['sender_ip', '192.0.2.10'],
    ['envelope', JSON.stringify({ to: [MAIL.to], from: MAIL.fromAddr })],
    // SendGrid posts each field in the charset it names here, not always UTF-8.
    ['charsets', JSON.stringify({ to: 'UTF-8', html: 'UTF-8', subject: 'UTF-8', from: 'UTF-8', text: 'iso-8859-1' })],
    ['SPF', 'pass'],
    ...(opts.htmlOnly ? [] : ([['text', Buffer.from(MAIL.text, 'latin1')]] as Array<[string, Buffer]>)),
    ['html', MAIL.html],
  ]);
}
