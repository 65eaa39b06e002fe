import { describe, expect, it } from 'vitest';
import { MAIL_LIMITS } from './bounded-text';
import { mailInputFromParts } from './mail-input';

const PARTS = {
  mailboxId: 'support',
  from: 'a@example.test',
  to: 'b@example.test',
  subject: 's',
  date: 'Tue, 1 Oct 2024 12:00:00 +0000',
  text: 'body',
  headers: {},
  sizeBytes: 10,
};

describe('mailInputFromParts', () => {
  it('bounds and cleans provider fields the way the raw path does', () => {
    const parsed = mailInputFromParts(
      {
        ...PARTS,
        messageIdHeader: '<id\u0000@example.test>',
        subject: `=?utf-8?Q?gr=C3=BC=C3=9F?= ${'x'.repeat(5000)}\u0000`,
        text: `line one  \r\n\r\n\r\n\r\nline two ${'y'.repeat(1000)}`,
        headers: { 'X-Long': 'v'.repeat(5000), 'X-Enc': '=?utf-8?B?w6Q=?=', 'X-N\u0000ul': 'n\u0000ul' },
        note: 'provider truncated the body',
      },
      { excerptChars: 30 },
    );
    expect(parsed.input.messageId).toBe('id@example.test');
    expect(parsed.input.subject.startsWith('grüß xxx')).toBe(true);
    expect(parsed.input.subject).toHaveLength(MAIL_LIMITS.maxSubjectChars);
    expect(parsed.input.excerpt).toBe('line one\n\nline two yyyyyyyyyyy');
    expect(parsed.input.headers).toEqual({ 'x-long': 'v'.repeat(MAIL_LIMITS.maxHeaderValueChars), 'x-enc': 'ä', 'x-nul': 'nul' });
    expect(parsed.input.note).toBe('provider truncated the body');
  });

  it('keeps a header named __proto__ as data, never as the prototype', () => {
    const headers = JSON.parse('{"__proto__": "x", "Subject": "s"}') as Record<string, string>;
    const parsed = mailInputFromParts({ ...PARTS, headers });
    expect(Object.getPrototypeOf(parsed.input.headers)).toBe(Object.prototype);
    expect(Object.keys(parsed.input.headers)).toEqual(['__proto__', 'subject']);
  });

  it('formats address lists as plain text, groups flattened', () => {
    const parsed = mailInputFromParts({
      ...PARTS,
      from: '"Doe, Jane" <jane@example.test>',
      to: 'Team: =?utf-8?Q?J=C3=B6rg?= <j@example.test>, k@example.test;, undisclosed-recipients:;',
    });
    expect(parsed.input.from).toBe('Doe, Jane <jane@example.test>');
    expect(parsed.input.to).toBe('Jörg <j@example.test>, k@example.test');
  });

  it('prefers the text body and falls back to HTML only when the text is blank', () => {
    const withText = mailInputFromParts({ ...PARTS, text: 'plain', html: '<p>html</p>' });
    const blankText = mailInputFromParts({ ...PARTS, text: '  \r\n', html: '<p>html</p>' });
    expect(withText.input.excerpt).toBe('plain');
    expect(blankText.input.excerpt).toBe('html');
    expect(blankText.messageKey).not.toBe(withText.messageKey);
  });
});
