import { sha256Hex as sha } from './hash';
import { describe, expect, it } from 'vitest';
import { canonicalBody, fallbackFingerprint, normalizeAddressList, normalizeDate, normalizeSubject, type FingerprintInput } from './fingerprint';
import { mailMessageKey } from './keys';

const base: FingerprintInput = {
  mailboxId: 'support',
  from: 'Alice Example <alice@example.com>',
  subject: 'Printer on fire',
  date: 'Tue, 14 Nov 2023 22:13:20 +0000',
  body: 'Hello,\nthe printer is on fire.\n',
};
const fp = (patch: Partial<FingerprintInput> = {}) => fallbackFingerprint({ ...base, ...patch });

describe('fallbackFingerprint', () => {
  it('follows docs/protocol.md: sha256(mailbox \\n from \\n subject \\n date \\n sha256(body))', () => {
    const expected = sha(
      ['support', 'alice@example.com', 'Printer on fire', '2023-11-14T22:13:20.000Z', sha('Hello,\nthe printer is on fire.')].join('\n'),
    );
    expect(fp()).toBe(expected);
  });

  it('is stable across calls (no receive time, no randomness)', () => {
    expect(fp()).toBe(fp());
  });

  it('ignores line endings and trailing whitespace of the body', () => {
    expect(fp({ body: 'Hello,  \r\nthe printer is on fire.\t\r\n\r\n' })).toBe(fp());
    expect(fp({ body: 'Hello,\rthe printer is on fire.' })).toBe(fp());
  });

  it('ignores address case, display names, and the order of addresses', () => {
    expect(fp({ from: 'ALICE@Example.COM' })).toBe(fp());
    expect(fp({ from: '"Someone Else" <Alice@example.com>' })).toBe(fp());
    const two = fp({ from: 'a@example.com, b@example.com' });
    expect(fp({ from: 'B@example.com,  "A" <a@EXAMPLE.com>' })).toBe(two);
  });

  it('compares dates as instants, whatever the timezone spelling', () => {
    for (const date of [
      'Tue, 14 Nov 2023 23:13:20 +0100',
      'Tue, 14 Nov 2023 17:13:20 -0500',
      'Tue, 14 Nov 2023 22:13:20 GMT',
      'Tue, 14 Nov 2023 22:13:20 +0000 (UTC)',
      '  Tue,  14 Nov 2023\r\n 22:13:20 +0000 ',
    ]) {
      expect(fp({ date }), date).toBe(fp());
    }
  });

  it('unfolds and collapses whitespace of the subject', () => {
    expect(fp({ subject: '  Printer\r\n on   fire ' })).toBe(fp());
  });

  it('changes with the body, subject, sender, date or mailbox', () => {
    const variants = [
      fp(),
      fp({ body: 'Hello,\nthe printer is fine.' }),
      fp({ subject: 'Printer on FIRE' }),
      fp({ from: 'bob@example.com' }),
      fp({ date: 'Tue, 14 Nov 2023 22:13:21 +0000' }),
      fp({ mailboxId: 'sales' }),
    ];
    expect(new Set(variants).size).toBe(variants.length);
  });

  it('never equals a Message-ID based key of the same mailbox', () => {
    expect(fp()).not.toBe(mailMessageKey('support', 'alice@example.com'));
  });
});

describe('normalizers', () => {
  it('normalizeAddressList falls back to lower-cased text without an address', () => {
    expect(normalizeAddressList('  Undisclosed   Recipients ')).toBe('undisclosed recipients');
    expect(normalizeAddressList('a@x.test, A@X.test')).toBe('a@x.test');
  });

  it('normalizeDate keeps an unparseable date as collapsed text', () => {
    expect(normalizeDate('  not  a date ')).toBe('not a date');
  });

  it('normalizeSubject keeps case', () => {
    expect(normalizeSubject('Re:  HELLO')).toBe('Re: HELLO');
  });

  it('canonicalBody trims trailing blank lines and per-line trailing whitespace only', () => {
    expect(canonicalBody('  a \r\n b\t\r\n\r\n')).toBe('  a\n b');
  });
});
