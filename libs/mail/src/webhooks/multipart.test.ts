import { describe, expect, it } from 'vitest';
import { formFields } from './form-body';
import { multipartBoundary, parseMultipart, parseUrlEncoded } from './multipart';
import { WebhookError } from './webhook-error';

const crlf = (lines: string[]) => Buffer.from(lines.join('\r\n'), 'latin1');

describe('parseMultipart', () => {
  it('reads fields as bytes, with filename, type and charset, ignoring preamble and epilogue', () => {
    const body = crlf([
      'preamble to ignore',
      '--XyZ',
      'Content-Disposition: form-data; name="text"',
      'Content-Type: text/plain; charset=ISO-8859-1',
      '',
      'Gr\u00fc\u00dfe',
      '--XyZ   ',
      'Content-Disposition: form-data; name="attachment1"; filename="a \\"b\\".txt"',
      'Content-Type: application/octet-stream',
      '',
      'line1\r\nline2',
      '--XyZ',
      '',
      'a part without headers is skipped',
      '--XyZ--',
      'epilogue',
    ]);
    const fields = parseMultipart(body, 'XyZ');
    expect(fields.map((f) => f.name)).toEqual(['text', 'attachment1']);
    expect(fields[0]!.data).toEqual(Buffer.from([0x47, 0x72, 0xfc, 0xdf, 0x65]));
    expect(fields[0]!.charset).toBe('iso-8859-1');
    expect(fields[1]).toMatchObject({ filename: 'a "b".txt', contentType: 'application/octet-stream' });
    expect(fields[1]!.data.toString()).toBe('line1\r\nline2');
  });

  it('keeps a value that contains the boundary text without a preceding CRLF', () => {
    const body = crlf(['--b', 'Content-Disposition: form-data; name="x"', '', 'a --b inside', '--b--', '']);
    expect(parseMultipart(body, 'b')[0]!.data.toString()).toBe('a --b inside');
  });

  it('refuses broken bodies with INVALID_PAYLOAD', () => {
    const cases = [
      Buffer.from('no boundary at all'),
      crlf(['--b', 'Content-Disposition: form-data; name="x"', '', 'never terminated']),
      crlf(['--bgarbage', 'Content-Disposition: form-data; name="x"', '', 'v', '--b--']),
      Buffer.from('--b\nContent-Disposition: form-data; name="x"\n\nLF only\n--b--\n'),
    ];
    for (const body of cases) {
      expect(() => parseMultipart(body, 'b')).toThrow(WebhookError);
    }
  });

  it('bounds the number of parts and the size of part headers', () => {
    const many = crlf([...Array.from({ length: 5 }, (_, i) => [`--b`, `Content-Disposition: form-data; name="f${i}"`, '', 'v']).flat(), '--b--']);
    expect(parseMultipart(many, 'b', { maxParts: 5 })).toHaveLength(5);
    expect(() => parseMultipart(many, 'b', { maxParts: 4 })).toThrow(/more than 4 parts/);
    const bigHeader = crlf(['--b', `Content-Disposition: form-data; name="x"; junk="${'j'.repeat(20_000)}"`, '', 'v', '--b--']);
    expect(() => parseMultipart(bigHeader, 'b')).toThrow(/headers missing or too large/);
  });

  it('reads the boundary parameter, quoted or not, and refuses over-long ones', () => {
    expect(multipartBoundary('multipart/form-data; boundary=abc')).toBe('abc');
    expect(multipartBoundary('Multipart/Form-Data; charset=utf-8; boundary="a b:c"')).toBe('a b:c');
    expect(multipartBoundary(`multipart/form-data; boundary=${'x'.repeat(71)}`)).toBeNull();
    expect(multipartBoundary('application/json')).toBeNull();
  });
});

describe('parseUrlEncoded', () => {
  it('decodes to bytes, so 8-bit values survive', () => {
    const fields = parseUrlEncoded(Buffer.from('body-mime=Subject%3A+Gr%FC%DFe%0D%0A&a=%E2%82%AC&flag&&b=100%'));
    expect(fields.map((f) => f.name)).toEqual(['body-mime', 'a', 'flag', 'b']);
    expect(fields[0]!.data).toEqual(Buffer.from([...Buffer.from('Subject: Gr'), 0xfc, 0xdf, 0x65, 0x0d, 0x0a]));
    expect(fields[1]!.data.toString('utf8')).toBe('€');
    expect(fields[2]!.data.length).toBe(0);
    expect(fields[3]!.data.toString()).toBe('100%');
  });

  it('bounds the number of fields', () => {
    expect(() => parseUrlEncoded(Buffer.from('a=1&b=2&c=3'), { maxFields: 2 })).toThrow(WebhookError);
  });
});

describe('formFields', () => {
  it('refuses a body that is not a form', () => {
    const req = { rawBody: Buffer.from('{}'), headers: {}, query: {}, contentType: 'application/json' };
    expect(() => formFields(req)).toThrow(expect.objectContaining({ code: 'UNSUPPORTED_MEDIA_TYPE' }));
  });

  it('decodes text in the part charset unless told otherwise, first field wins', () => {
    const body = crlf([
      '--b',
      'Content-Disposition: form-data; name="t"',
      'Content-Type: text/plain; charset=iso-8859-1',
      '',
      'K\u00f6ln',
      '--b',
      'Content-Disposition: form-data; name="t"',
      '',
      'second',
      '--b--',
    ]);
    const form = formFields({ rawBody: body, headers: {}, query: {}, contentType: 'multipart/form-data; boundary=b' });
    expect(form.text('t')).toBe('Köln');
    expect(form.text('t', 'utf-8')).toBe('K\ufffdln');
    expect(form.has('missing')).toBe(false);
  });
});
