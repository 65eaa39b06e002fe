import { fallbackFingerprint, mailMessageKey } from '@singleshot/core';
import { describe, expect, it } from 'vitest';
import { mailInputFromParts, messageKeyFromParts } from './mail-input';
import { parseRawMail } from './parse-raw-mail';

const CRLF = '\r\n';

function eml(headers: string[], body: string): Buffer {
  return Buffer.from(headers.join(CRLF) + CRLF + CRLF + body, 'utf8');
}

const CORE = [
  'From: =?utf-8?Q?J=C3=B6rg_M=C3=BCller?= <Joerg@Example.test>',
  'To: "Support, Team" <support@example.test>',
  'Subject: =?utf-8?B?UmVjaG51bmcgw7xiZXI=?=\r\n =?utf-8?B?ZsOkbGxpZw==?=',
  'Date: Tue, 1 Oct 2024 12:00:00 +0200',
  'MIME-Version: 1.0',
  'Content-Type: text/plain; charset=utf-8',
];
const BODY = 'Hallo,\r\nbitte zahlen.  \r\n';

/** The same mail as a second relay would hand it over: other trace headers, other order. */
const RELAY_A = [
  'Return-Path: <bounce-1@relay-a.test>',
  'Received: from relay-a.test by mx1.test; Tue, 1 Oct 2024 10:00:05 +0000',
  'Delivered-To: inbox-a@example.test',
  'DKIM-Signature: v=1; a=rsa-sha256; d=example.test; b=AAAA',
  'ARC-Seal: i=1; a=rsa-sha256; cv=none; b=BBBB',
  'X-Spam-Score: 0.1',
];
const RELAY_B = [
  'Received: from relay-b.test by mx2.test; Wed, 2 Oct 2024 08:13:00 +0000',
  'Received: from relay-c.test by relay-b.test; Wed, 2 Oct 2024 08:12:59 +0000',
  'Return-Path: <bounce-2@relay-b.test>',
  'Delivered-To: inbox-b@example.test',
  'X-Forwarded-For: someone@elsewhere.test',
  'X-Spam-Score: 7.9',
  'ARC-Authentication-Results: i=2; mx2.test; dkim=pass',
];

describe('mail identity', () => {
  it('gives the same key to the same mail arriving with different trace and X- headers', async () => {
    for (const idHeader of [['Message-ID: <same@example.test>'], []]) {
      const a = await parseRawMail(eml([...RELAY_A, ...CORE, ...idHeader], BODY), { mailboxId: 'support' });
      const b = await parseRawMail(eml([...RELAY_B, ...idHeader, ...CORE], BODY), { mailboxId: 'support' });
      expect(b.messageKey).toBe(a.messageKey);
      expect(a.input.identity).toBe(idHeader.length > 0 ? 'message-id' : 'fingerprint');
    }
  });

  it('gives the same key to folded, commented and bracket-less spellings of one Message-ID', async () => {
    const spellings = [
      'Message-ID: <abc.123@Example.TEST>',
      'Message-ID:\r\n <abc.123@example.test>',
      'Message-Id: <abc.123@\r\n example.test>',
      'message-id: (sent by mailer) <abc.123@example.test> (trailing comment)',
      'Message-ID: abc.123@example.test',
    ];
    const keys = new Set<string>();
    for (const spelling of spellings) {
      const parsed = await parseRawMail(eml([...CORE, spelling], BODY), { mailboxId: 'support' });
      expect(parsed.input.messageId).toBe('abc.123@example.test');
      keys.add(parsed.messageKey);
    }
    expect([...keys]).toEqual([mailMessageKey('support', 'abc.123@example.test')]);
  });

  it('keeps mails with the same subject and body but different Message-IDs apart', async () => {
    const a = await parseRawMail(eml([...CORE, 'Message-ID: <one@example.test>'], BODY), { mailboxId: 'support' });
    const b = await parseRawMail(eml([...CORE, 'Message-ID: <two@example.test>'], BODY), { mailboxId: 'support' });
    expect(a.messageKey).not.toBe(b.messageKey);
  });

  it('keeps the same Message-ID in two mailboxes apart', async () => {
    const raw = eml([...CORE, 'Message-ID: <one@example.test>'], BODY);
    const a = await parseRawMail(raw, { mailboxId: 'support' });
    const b = await parseRawMail(raw, { mailboxId: 'sales' });
    expect(a.messageKey).not.toBe(b.messageKey);
  });

  it('uses the first of two Message-ID headers, as written', async () => {
    const parsed = await parseRawMail(eml([...CORE, 'Message-ID: <first@example.test>', 'Message-ID: <second@example.test>'], BODY), {
      mailboxId: 'support',
    });
    expect(parsed.input.messageId).toBe('first@example.test');
  });

  it('fingerprints a mail without Message-ID identically on the raw path and from provider fields', async () => {
    const raw = await parseRawMail(eml([...RELAY_A, ...CORE], BODY), { mailboxId: 'support' });
    // What a provider webhook (Postmark/Mailgun/SendGrid style) posts for the same mail: decoded fields
    // (the two encoded words join without the folding space, RFC 2047 6.2).
    const parts = mailInputFromParts({
      mailboxId: 'support',
      from: '"Jörg Müller" <Joerg@Example.test>',
      to: '"Support, Team" <support@example.test>',
      subject: 'Rechnung überfällig',
      date: 'Tue, 1 Oct 2024 12:00:00 +0200',
      text: 'Hallo,\nbitte zahlen.\n',
      headers: { 'Received': 'from provider', 'X-Provider-Id': 'p-1' },
      sizeBytes: 999,
    });
    expect(raw.identityFallbackReason).toBe('missing');
    expect(parts.identityFallbackReason).toBe('missing');
    expect(parts.messageKey).toBe(raw.messageKey);
    expect(parts.input.from).toBe(raw.input.from);
    expect(parts.input.to).toBe(raw.input.to);
    expect(parts.input.subject).toBe(raw.input.subject);
    expect(parts.input.excerpt).toBe(raw.input.excerpt);
    // Providers that lower-case the address still meet the same key (the fingerprint compares addresses lower-cased).
    const lowerCased = messageKeyFromParts({
      mailboxId: 'support',
      from: 'joerg@example.test',
      subject: 'Rechnung überfällig',
      date: 'Tue, 01 Oct 2024 10:00:00 GMT',
      text: 'Hallo,\r\nbitte zahlen.',
      headers: {},
    });
    expect(lowerCased.messageKey).toBe(raw.messageKey);
    // And the key is the core fingerprint over exactly those fields, not something ad hoc.
    expect(raw.messageKey).toBe(
      fallbackFingerprint({
        mailboxId: 'support',
        from: 'Jörg Müller <Joerg@Example.test>',
        subject: 'Rechnung überfällig',
        date: 'Tue, 1 Oct 2024 12:00:00 +0200',
        body: 'Hallo,\nbitte zahlen.',
      }),
    );
  });

  it('fingerprints an HTML-only mail identically on both paths', async () => {
    const html = '<html><head><style>p{color:red}</style></head><body><p>Dein&nbsp;Code:</p><p><b>4711</b></p></body></html>';
    const raw = await parseRawMail(
      eml(['From: bot@example.test', 'Subject: Code', 'Date: Tue, 1 Oct 2024 12:00:00 +0000', 'Content-Type: text/html; charset=utf-8'], html),
      { mailboxId: 'support' },
    );
    const parts = mailInputFromParts({
      mailboxId: 'support',
      from: 'bot@example.test',
      to: '',
      subject: 'Code',
      date: 'Tue, 1 Oct 2024 12:00:00 +0000',
      text: '',
      html,
      headers: {},
      sizeBytes: html.length,
    });
    expect(raw.input.excerpt).toBe('Dein Code:\n\n4711');
    expect(parts.messageKey).toBe(raw.messageKey);
  });

  it('takes the Message-ID from provider headers when no explicit header value is given', async () => {
    const raw = await parseRawMail(eml([...CORE, 'Message-ID: <p@example.test>'], BODY), { mailboxId: 'support' });
    const fromHeaders = messageKeyFromParts({
      mailboxId: 'support',
      from: 'x@example.test',
      subject: 'unrelated',
      date: '',
      text: 'unrelated',
      headers: { 'Message-Id': '<p@EXAMPLE.test>' },
    });
    const explicitNull = messageKeyFromParts({
      mailboxId: 'support',
      messageIdHeader: null,
      from: 'x@example.test',
      subject: 'unrelated',
      date: '',
      text: 'unrelated',
      headers: { 'Message-Id': '<p@EXAMPLE.test>' },
    });
    expect(fromHeaders.messageKey).toBe(raw.messageKey);
    expect(fromHeaders.identity).toBe('message-id');
    expect(explicitNull.identity).toBe('fingerprint');
    expect(explicitNull.identityFallbackReason).toBe('missing');
  });

  it('reports a malformed Message-ID as the fallback reason', async () => {
    const parsed = await parseRawMail(eml([...CORE, 'Message-ID: not an id at all'], BODY), { mailboxId: 'support' });
    expect(parsed.identityFallbackReason).toBe('malformed');
    expect(parsed.input.messageId).toBeNull();
  });
});
