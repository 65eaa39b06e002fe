import { describe, expect, it } from 'vitest';
import { extractHeaderBlock, firstHeaderValues, parseHeaderBlock, readRawHeader } from './raw-headers';

const b = (s: string): Buffer => Buffer.from(s, 'utf8');

describe('extractHeaderBlock', () => {
  it('ends at the first empty line, CRLF or bare LF', () => {
    expect(extractHeaderBlock(b('A: 1\r\nB: 2\r\n\r\nbody\r\n\r\nmore')).toString()).toBe('A: 1\r\nB: 2\r');
    expect(extractHeaderBlock(b('A: 1\nB: 2\n\nbody')).toString()).toBe('A: 1\nB: 2');
  });

  it('treats a message without an empty line as all headers, and a leading empty line as no headers', () => {
    expect(extractHeaderBlock(b('A: 1\r\nB: 2')).toString()).toBe('A: 1\r\nB: 2');
    expect(extractHeaderBlock(b('\r\nA: 1\r\n')).length).toBe(0);
    expect(extractHeaderBlock(b('\nA: 1\n')).length).toBe(0);
    expect(extractHeaderBlock(Buffer.alloc(0)).length).toBe(0);
  });

  it('returns at most maxBytes bytes', () => {
    expect(extractHeaderBlock(b(`A: ${'x'.repeat(100)}\r\n\r\nbody`), 10).toString()).toBe('A: xxxxxxx');
  });
});

describe('parseHeaderBlock', () => {
  it('unfolds by removing only the line break, keeps duplicates in order', () => {
    const headers = parseHeaderBlock(b('Subject: one\r\n two\r\n\tthree\r\nReceived: a\r\nReceived: b'));
    expect(headers).toEqual([
      { name: 'Subject', value: 'one two\tthree' },
      { name: 'Received', value: 'a' },
      { name: 'Received', value: 'b' },
    ]);
  });

  it('skips lines that are not fields, with their continuations', () => {
    const headers = parseHeaderBlock(
      b(' orphan continuation\r\nFrom someone@example.test Sat Jan  3 01:05:34 1996\r\n more\r\nno colon here\r\nSubject : obs spacing\r\n: empty name'),
    );
    expect(headers).toEqual([{ name: 'Subject', value: 'obs spacing' }]);
  });

  it('reads UTF-8 header bytes as UTF-8 and anything else as Latin-1, per header', () => {
    const raw = Buffer.concat([b('A: caf\u00e9\r\nB: caf'), Buffer.from([0xe9])]);
    expect(parseHeaderBlock(raw)).toEqual([
      { name: 'A', value: 'caf\u00e9' },
      { name: 'B', value: 'caf\u00e9' },
    ]);
  });

  it('firstHeaderValues keeps the first value of each lower-cased name', () => {
    const first = firstHeaderValues(parseHeaderBlock(b('Received: a\r\nSubject: s\r\nRECEIVED: b')));
    expect([...first.entries()]).toEqual([
      ['received', 'a'],
      ['subject', 's'],
    ]);
  });
});

describe('readRawHeader', () => {
  it('returns the unfolded first value, case-insensitively, or null', () => {
    const raw = b('message-ID:\r\n <x@example.test>\r\nMessage-ID: <y@example.test>\r\n\r\nMessage-ID: <body@example.test>\r\n');
    expect(readRawHeader(raw, 'Message-ID')).toBe('<x@example.test>');
    expect(readRawHeader(raw, 'subject')).toBeNull();
  });

  it('never reads a header-looking line out of the body', () => {
    expect(readRawHeader(b('From: a@example.test\r\n\r\nSubject: not a header'), 'subject')).toBeNull();
  });
});
