import { describe, expect, it } from 'vitest';
import { MAIL_LIMITS } from './bounded-text';
import type { ParsedMail } from './mail-input';
import { parseRawMail } from './parse-raw-mail';

const CRLF = '\r\n';
const MiB = 1024 * 1024;

function eml(headers: string[], body: string): Buffer {
  return Buffer.from(headers.join(CRLF) + CRLF + CRLF + body, 'utf8');
}

const BASE = ['From: Alice <alice@example.test>', 'To: bob@example.test', 'Subject: hello', 'Date: Tue, 1 Oct 2024 10:00:00 +0000'];

/** Every string anywhere in the summary, keys included, so a NUL cannot hide in a nested field. */
function allStrings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => [k, ...allStrings(v)]);
  return [];
}

/** What every result, however hostile the input, must satisfy. */
function expectBoundedSummary(parsed: ParsedMail, raw: Buffer): void {
  expect(parsed.messageKey).toMatch(/^[0-9a-f]{64}$/);
  expect(parsed.input.kind).toBe('mail');
  expect(parsed.input.sizeBytes).toBe(raw.length);
  expect(parsed.input.excerpt.length).toBeLessThanOrEqual(MAIL_LIMITS.excerptChars);
  expect(parsed.input.subject.length).toBeLessThanOrEqual(MAIL_LIMITS.maxSubjectChars);
  expect(parsed.input.from.length).toBeLessThanOrEqual(MAIL_LIMITS.maxAddressChars);
  expect(Object.keys(parsed.input.headers).length).toBeLessThanOrEqual(MAIL_LIMITS.maxHeaders);
  for (const v of Object.values(parsed.input.headers)) expect(v.length).toBeLessThanOrEqual(MAIL_LIMITS.maxHeaderValueChars);
  for (const s of allStrings(parsed.input)) expect(s).not.toContain('\u0000');
}

async function parse(raw: Buffer, extra: { maxBytes?: number; parseTimeoutMs?: number } = {}): Promise<ParsedMail> {
  const parsed = await parseRawMail(raw, { mailboxId: 'mb', ...extra });
  expectBoundedSummary(parsed, raw);
  return parsed;
}

function nestedMultipart(depth: number): string {
  let inner = ['Content-Type: text/plain; charset=utf-8', '', 'deepest text'].join(CRLF);
  for (let d = depth; d >= 1; d--) {
    inner = [`Content-Type: multipart/mixed; boundary="n${d}"`, '', `--n${d}`, inner, `--n${d}--`, ''].join(CRLF);
  }
  return inner;
}

describe('parseRawMail on hostile input', () => {
  it('summarizes a multipart whose closing boundary never comes', async () => {
    // Truncated uploads and broken MUAs leave multiparts open; the parser must not wait for more.
    const raw = eml(
      [...BASE, 'Message-ID: <open@example.test>', 'Content-Type: multipart/mixed; boundary="b1"'],
      ['--b1', 'Content-Type: text/plain', '', 'first part', '--b1', 'Content-Type: text/plain', '', 'second, no end'].join(CRLF),
    );
    const parsed = await parse(raw);
    expect(parsed.input.messageId).toBe('open@example.test');
    expect(parsed.input.excerpt).toBe('first part\nsecond, no end');
    expect(parsed.input.note).toBeUndefined();
  });

  it('survives a 10 MB header and still reads the headers after it', async () => {
    // One giant header is the classic parser memory/CPU bomb; Subject comes after it on purpose.
    const raw = eml(
      ['From: alice@example.test', `X-Huge: ${'a'.repeat(10 * MiB)}`, 'Subject: after the bomb', 'Message-ID: <bomb@example.test>'],
      'body text',
    );
    const parsed = await parse(raw);
    expect(parsed.input.messageId).toBe('bomb@example.test');
    expect(parsed.input.subject).toBe('after the bomb');
    expect(parsed.input.headers['x-huge']).toBe('a'.repeat(MAIL_LIMITS.maxHeaderValueChars));
    // mailparser refuses a header block over 1 MB; we keep the header-derived summary and say so.
    expect(parsed.input.note).toMatch(/^header-only summary: parse failed: /);
    expect(parsed.input.excerpt).toBe('');
  });

  it('keeps a mail whose attachment pushes it past the default 25 MiB cap, header-only', async () => {
    // Oversized mail must never be dropped (docs/protocol.md invariant 7) nor fully buffered through the parser.
    const attachment = Buffer.alloc(19 * MiB, 0x5a).toString('base64').replace(/.{76}/g, `$&${CRLF}`);
    const raw = eml(
      [...BASE, 'Message-ID: <big@example.test>', 'Content-Type: multipart/mixed; boundary="b"'],
      ['--b', 'Content-Type: text/plain', '', 'see attached', '--b', 'Content-Type: application/octet-stream',
        'Content-Transfer-Encoding: base64', '', attachment, '--b--', ''].join(CRLF),
    );
    expect(raw.length).toBeGreaterThan(MAIL_LIMITS.maxBytes);
    const parsed = await parse(raw);
    expect(parsed.input.note).toBe(`truncated: ${raw.length - MAIL_LIMITS.maxBytes} bytes over cap`);
    expect(parsed.input.messageId).toBe('big@example.test');
    expect(parsed.input.subject).toBe('hello');
    expect(parsed.input.from).toBe('Alice <alice@example.test>');
    expect(parsed.input.excerpt).toBe('');
  });

  it('applies a configured maxBytes the same way', async () => {
    // Deployments lower the cap; the note must report the overshoot against that cap.
    const raw = eml([...BASE, 'Message-ID: <cap@example.test>'], 'x'.repeat(5000));
    const parsed = await parse(raw, { maxBytes: 1000 });
    expect(parsed.input.note).toBe(`truncated: ${raw.length - 1000} bytes over cap`);
    expect(parsed.input.messageId).toBe('cap@example.test');
  });

  it('decodes what it can of an invalid base64 body', async () => {
    // Broken transfer encodings are common in spam and must not throw out of the decoder.
    const raw = eml([...BASE, 'Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: base64'], '@@@!!!***not base64===');
    const parsed = await parse(raw);
    expect(parsed.input.note).toBeUndefined();
    expect(parsed.input.subject).toBe('hello');
    expect(parsed.identityFallbackReason).toBe('missing');
  });

  it('reads bodies and encoded words in unknown charsets and invalid UTF-8 without failing', async () => {
    // A made-up charset label and bytes invalid in every charset must degrade to replacement text.
    const raw = Buffer.concat([
      Buffer.from([...BASE.slice(0, 2), 'Subject: =?x-klingon?Q?hello_there?= =?utf-8?B?!!!?=',
        'Message-ID: <cs@example.test>', 'Content-Type: text/plain; charset=x-klingon', '', ''].join(CRLF)),
      Buffer.from([0xff, 0xfe, 0x41, 0xc3, 0x28, 0x42]),
    ]);
    const parsed = await parse(raw);
    expect(parsed.input.subject).toBe('hello there');
    expect(parsed.input.excerpt).toContain('A');
    expect(parsed.input.note).toBeUndefined();
  });

  it('reads Latin-1 header bytes that are not valid UTF-8', async () => {
    // Old MUAs put raw 8-bit Latin-1 in headers; only that header falls back, the rest stays UTF-8.
    const raw = Buffer.concat([
      Buffer.from('From: a@example.test\r\nSubject: caf'),
      Buffer.from([0xe9]),
      Buffer.from('\r\nX-Utf8: caf\u00e9\r\n\r\nbody'),
    ]);
    const parsed = await parse(raw);
    expect(parsed.input.subject).toBe('caf\u00e9');
    expect(parsed.input.headers['x-utf8']).toBe('caf\u00e9');
  });

  it('handles multipart nested 100 deep', async () => {
    // Deep nesting is a recursion bomb for tree-walking parsers.
    const raw = Buffer.from([...BASE, 'Message-ID: <deep@example.test>', nestedMultipart(100)].join(CRLF));
    const parsed = await parse(raw);
    expect(parsed.input.messageId).toBe('deep@example.test');
    expect(parsed.input.excerpt).toBe('deepest text');
  });

  it('falls back to the fingerprint for a 5,000-character Message-ID', async () => {
    // An id past the RFC line limit is not an id we can trust to be stable across relays.
    const raw = eml([...BASE, `Message-ID: <${'x'.repeat(5000)}@example.test>`], 'body');
    const parsed = await parse(raw);
    expect(parsed.identityFallbackReason).toBe('too_long');
    expect(parsed.input.identity).toBe('fingerprint');
    expect(parsed.input.messageId).toBeNull();
  });

  it('strips NUL bytes from every output string', async () => {
    // NULs truncate C strings in downstream tools and are rejected by some stores.
    const raw = eml(
      ['From: Al\u0000ice <al\u0000ice@example.test>', 'Subject: he\u0000llo', 'X-Trace: v\u0000alue', 'Message-ID: <n\u0000ul@example.test>'],
      'bo\u0000dy\u0000',
    );
    const parsed = await parse(raw);
    expect(parsed.input.from).toBe('Alice <alice@example.test>');
    expect(parsed.input.subject).toBe('hello');
    expect(parsed.input.headers['x-trace']).toBe('value');
    expect(parsed.input.messageId).toBe('nul@example.test');
    expect(parsed.input.excerpt).toBe('body');
  });

  it('summarizes input with no header block at all', async () => {
    // Garbage posted to the raw endpoint must still become one (fingerprinted) message.
    const raw = Buffer.from('just some words\r\nand more words\r\n');
    const parsed = await parse(raw);
    expect(parsed.identityFallbackReason).toBe('missing');
    expect(parsed.input.headers).toEqual({});
    expect(parsed.input.subject).toBe('');
  });

  it('summarizes a message that starts with an empty line (empty header section)', async () => {
    // Legal per RFC 5322 (all headers optional); the whole rest is body.
    const raw = Buffer.from('\r\nbody only\r\n');
    const parsed = await parse(raw);
    expect(parsed.input.headers).toEqual({});
    expect(parsed.input.excerpt).toBe('body only');
  });

  it('summarizes empty input', async () => {
    // A zero-byte upload (aborted client) is still an arrival and must not crash the parser.
    const parsed = await parse(Buffer.alloc(0));
    expect(parsed.identityFallbackReason).toBe('missing');
    expect(parsed.input.sizeBytes).toBe(0);
    expect(parsed.input.excerpt).toBe('');
  });

  it('falls back to a header-only summary when the parse deadline passes', async () => {
    // A parse that outlives its budget must not hold the ingest path; a zero budget makes it certain.
    const raw = eml([...BASE, 'Message-ID: <slow@example.test>'], 'body that is never read');
    const parsed = await parse(raw, { parseTimeoutMs: 0 });
    expect(parsed.input.note).toBe('header-only summary: parse timed out after 0 ms');
    expect(parsed.input.messageId).toBe('slow@example.test');
    expect(parsed.input.subject).toBe('hello');
    expect(parsed.input.excerpt).toBe('');
  });

  it('caps header count, header values and subject', async () => {
    // Header floods would otherwise be copied into every queue job and log line.
    const flood = Array.from({ length: 300 }, (_, i) => `X-Flood-${i}: ${'v'.repeat(3000)}`);
    const raw = eml([...BASE.slice(0, 2), `Subject: ${'s'.repeat(5000)}`, ...flood], 'body');
    const parsed = await parse(raw);
    expect(Object.keys(parsed.input.headers)).toHaveLength(MAIL_LIMITS.maxHeaders);
    expect(parsed.input.headers['x-flood-0']).toHaveLength(MAIL_LIMITS.maxHeaderValueChars);
    expect(parsed.input.subject).toHaveLength(MAIL_LIMITS.maxSubjectChars);
  });
});
