import { describe, expect, it } from 'vitest';
import { decodeCharset, decodeEncodedWords } from './encoded-words';

const b64 = (bytes: Buffer): string => bytes.toString('base64');

describe('decodeEncodedWords', () => {
  it('decodes B and Q words and keeps the text around them', () => {
    expect(decodeEncodedWords('Re: =?UTF-8?B?w6TDtsO8?= and =?iso-8859-1?q?caf=E9_au_lait?=!')).toBe('Re: äöü and café au lait!');
  });

  it('drops whitespace between adjacent encoded words, folding included', () => {
    expect(decodeEncodedWords('=?utf-8?q?a?= =?utf-8?q?b?=\r\n =?utf-8?q?c?=')).toBe('abc');
  });

  it('joins a multi-byte character split across two words before decoding', () => {
    const bytes = Buffer.from('日本', 'utf8');
    const value = `=?utf-8?B?${b64(bytes.subarray(0, 4))}?= =?utf-8?B?${b64(bytes.subarray(4))}?=`;
    expect(decodeEncodedWords(value)).toBe('日本');
  });

  it('decodes non-UTF-8 charsets and ignores an RFC 2231 language suffix', () => {
    expect(decodeEncodedWords('=?ISO-2022-JP?B?GyRCRnxLXBsoQg==?=')).toBe('日本');
    expect(decodeEncodedWords('=?utf-8*de?Q?Gr=C3=BC=C3=9Fe?=')).toBe('Grüße');
  });

  it('leaves malformed words as written and passes plain text through', () => {
    expect(decodeEncodedWords('=?utf-8?X?nope?= plain')).toBe('=?utf-8?X?nope?= plain');
    expect(decodeEncodedWords('no words here')).toBe('no words here');
  });

  it('falls back to UTF-8 for unknown or unsupported charsets instead of throwing', () => {
    expect(decodeCharset(Buffer.from('ok', 'utf8'), 'x-klingon')).toBe('ok');
    expect(decodeCharset(Buffer.from('ok', 'utf8'), 'utf-7')).toBe('ok');
  });
});
