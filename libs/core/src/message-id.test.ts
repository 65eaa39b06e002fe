import { describe, expect, it } from 'vitest';
import { MAX_MESSAGE_ID_LENGTH, normalizeMessageId } from './message-id';

const ok = (id: string) => ({ ok: true, id });
const bad = (reason: 'missing' | 'malformed' | 'too_long') => ({ ok: false, reason });

describe('normalizeMessageId', () => {
  it('strips the angle brackets of a plain id', () => {
    expect(normalizeMessageId('<abc.123@example.com>')).toEqual(ok('abc.123@example.com'));
  });

  it('ignores whitespace around the id', () => {
    expect(normalizeMessageId('  \t<abc@example.com>\t  ')).toEqual(ok('abc@example.com'));
  });

  it('unfolds CRLF + WSP before, after and inside the id', () => {
    expect(normalizeMessageId('\r\n <abc@example.com>\r\n\t')).toEqual(ok('abc@example.com'));
    expect(normalizeMessageId('<abc.def@mail.\r\n example.com>')).toEqual(ok('abc.def@mail.example.com'));
    expect(normalizeMessageId('<abc.\r\n\tdef@example.com>')).toEqual(ok('abc.def@example.com'));
    // Bare LF folding (as some tools write headers) unfolds the same way.
    expect(normalizeMessageId('\n <abc@exa\n mple.com>')).toEqual(ok('abc@example.com'));
  });

  it('removes RFC 5322 comments, nested and with escaped parentheses', () => {
    expect(normalizeMessageId('(sent by mta) <abc@example.com> (trailing)')).toEqual(ok('abc@example.com'));
    expect(normalizeMessageId('(outer (inner (deep)) still outer) <abc@example.com>')).toEqual(ok('abc@example.com'));
    expect(normalizeMessageId('(a \\) escaped close and \\( open) <abc@example.com>')).toEqual(ok('abc@example.com'));
    // A comment may quote an old id; it must not be taken for the real one.
    expect(normalizeMessageId('(was <old@example.com>) <new@example.com>')).toEqual(ok('new@example.com'));
  });

  it('keeps parentheses inside a quoted string', () => {
    expect(normalizeMessageId('"x (not a comment)" <abc@example.com>')).toEqual(ok('abc@example.com'));
  });

  it('accepts a lone id without brackets but not a phrase', () => {
    expect(normalizeMessageId('abc@example.com')).toEqual(ok('abc@example.com'));
    expect(normalizeMessageId('  abc@Example.COM  ')).toEqual(ok('abc@example.com'));
    expect(normalizeMessageId('hello abc@example.com')).toEqual(bad('malformed'));
  });

  it('takes the first bracketed id when there are several', () => {
    expect(normalizeMessageId('<first@example.com> <second@example.com>')).toEqual(ok('first@example.com'));
    expect(normalizeMessageId('<first@example.com>,\r\n <second@example.com>')).toEqual(ok('first@example.com'));
  });

  it('lower-cases id-right but keeps the case of id-left', () => {
    expect(normalizeMessageId('<AbC.XyZ@Mail.Example.COM>')).toEqual(ok('AbC.XyZ@mail.example.com'));
    const upper = normalizeMessageId('<ABC@example.com>');
    const lower = normalizeMessageId('<abc@example.com>');
    expect(upper).toEqual(ok('ABC@example.com'));
    expect(lower).toEqual(ok('abc@example.com'));
  });

  it('splits at the last "@" (id-left may contain a quoted "@")', () => {
    expect(normalizeMessageId('<"a@b"@Example.com>')).toEqual(ok('"a@b"@example.com'));
  });

  it('drops NUL and other control characters', () => {
    expect(normalizeMessageId('<abc\u0000def@example.com>')).toEqual(ok('abcdef@example.com'));
    expect(normalizeMessageId('<abc\u0001\u001f\u007f@exam\u0000ple.com>')).toEqual(ok('abc@example.com'));
    expect(normalizeMessageId('\u0000\u0000')).toEqual(bad('missing'));
  });

  it('refuses an id longer than the line limit as too_long', () => {
    const long = `<${'a'.repeat(5000)}@example.com>`;
    expect(normalizeMessageId(long)).toEqual(bad('too_long'));
    expect(normalizeMessageId(long.slice(1, -1))).toEqual(bad('too_long'));
    const atLimit = `${'a'.repeat(MAX_MESSAGE_ID_LENGTH - '@example.com'.length)}@example.com`;
    expect(normalizeMessageId(`<${atLimit}>`)).toEqual(ok(atLimit));
    expect(normalizeMessageId(`<a${atLimit}>`)).toEqual(bad('too_long'));
  });

  it('reports missing for null, undefined, empty, blank and comment-only values', () => {
    expect(normalizeMessageId(null)).toEqual(bad('missing'));
    expect(normalizeMessageId(undefined)).toEqual(bad('missing'));
    expect(normalizeMessageId('')).toEqual(bad('missing'));
    expect(normalizeMessageId(' \r\n \t')).toEqual(bad('missing'));
    expect(normalizeMessageId('(only a comment)')).toEqual(bad('missing'));
  });

  it('refuses garbage as malformed', () => {
    for (const value of ['<>', '< >', 'no-at-sign', '<no-at-sign>', '<@example.com>', '<abc@>', '@', '<a@b@>', 'just some words', '<abc@example.com', 'abc@example.com>']) {
      expect(normalizeMessageId(value), JSON.stringify(value)).toMatchObject({ ok: false });
    }
    expect(normalizeMessageId('<>')).toEqual(bad('malformed'));
    expect(normalizeMessageId('<@example.com>')).toEqual(bad('malformed'));
    expect(normalizeMessageId('<abc@>')).toEqual(bad('malformed'));
    expect(normalizeMessageId('just some words')).toEqual(bad('malformed'));
  });

  it('maps the same id spelled differently to one value', () => {
    const spellings = [
      '<Part.1@Example.com>',
      ' <Part.1@example.COM> ',
      '(c) <Part.1@example.com>',
      '\r\n <Part.1@\r\n example.com>',
      'Part.1@EXAMPLE.com',
    ];
    const ids = spellings.map((s) => normalizeMessageId(s));
    for (const id of ids) expect(id).toEqual(ok('Part.1@example.com'));
  });
});
