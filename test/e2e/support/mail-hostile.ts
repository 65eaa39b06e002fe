/**
 * Hostile mails for mail-hostile.test.ts: each one exists because a real
 * sender, a broken MUA or an attacker produces it, and each has hurt a mail
 * parser somewhere. Built in code (not stored), so sizes can be large.
 */
const CRLF = '\r\n';
const KiB = 1024;
const MiB = 1024 * KiB;

export interface HostileCase {
  name: string;
  raw: Buffer;
  /** Over the IMAP size cap of the suite's mailbox: IMAP hands over the header block only. */
  overImapCap?: boolean;
  /** Over the ingest HTTP body limit: the raw endpoint answers 413 (never a 2xx for a mail it did not keep). */
  overBodyLimit?: boolean;
}

function eml(headers: string[], body: string | Buffer): Buffer {
  return Buffer.concat([Buffer.from(headers.join(CRLF) + CRLF + CRLF, 'latin1'), Buffer.isBuffer(body) ? body : Buffer.from(body, 'latin1')]);
}

const base = (n: string, messageId = true) => [
  `From: Hostile ${n} <hostile-${n}@example.test>`,
  'To: support@example.test',
  `Subject: hostile ${n}`,
  'Date: Tue, 01 Oct 2024 10:00:00 +0000',
  ...(messageId ? [`Message-ID: <hostile-${n}@mail.example.test>`] : []),
  'MIME-Version: 1.0',
];

function nested(depth: number): string {
  let inner = ['Content-Type: text/plain; charset=utf-8', '', 'the bottom of a 100-deep multipart'].join(CRLF);
  for (let d = depth; d >= 1; d--) inner = [`Content-Type: multipart/mixed; boundary="n${d}"`, '', `--n${d}`, inner, `--n${d}--`, ''].join(CRLF);
  return inner;
}

function attachment(n: string, bytes: number): Buffer {
  // Base64 lines of 76 characters, as MUAs write them.
  const data = Buffer.alloc(bytes, 0x5a).toString('base64').replace(/.{76}/g, `$&${CRLF}`);
  return eml(
    [...base(n), 'Content-Type: multipart/mixed; boundary="att"'],
    ['--att', 'Content-Type: text/plain; charset=utf-8', '', `see the attached ${bytes} bytes`, '--att', 'Content-Type: application/octet-stream; name="big.bin"', 'Content-Transfer-Encoding: base64', 'Content-Disposition: attachment; filename="big.bin"', '', data, '--att--', ''].join(CRLF),
  );
}

/**
 * The generated cases. `imapCapBytes` and `bodyLimitBytes` are the suite's
 * IMAP `maxMessageBytes` and ingest `maxBodyBytes`.
 */
export function hostileCases(limits: { imapCapBytes: number; bodyLimitBytes: number }): HostileCase[] {
  const cases: HostileCase[] = [];

  // Malformed MIME: a multipart whose boundary never appears and whose closing
  // delimiter is missing (truncated uploads, broken MUAs); a parser must not wait for more.
  cases.push({
    name: 'multipart-without-boundary',
    raw: eml([...base('mpnb'), 'Content-Type: multipart/mixed; boundary="never-used"'], `no delimiter here${CRLF}--almost${CRLF}text`),
  });
  // Malformed MIME: header lines without a colon, a Content-Type with no
  // subtype and an unterminated quoted boundary parameter.
  cases.push({
    name: 'garbage-headers',
    raw: eml([...base('garbage'), 'this line has no colon', ': empty name', 'Content-Type: multipart; boundary="unterminated'], `--unterminated${CRLF}body`),
  });
  // Malformed MIME without a Message-ID: the fallback fingerprint must come
  // out the same on every path although the structure is broken.
  cases.push({
    name: 'malformed-no-message-id',
    raw: eml([...base('malformed-noid', false), 'Content-Type: multipart/alternative; boundary=b'], `--b${CRLF}Content-Type: text/plain${CRLF}${CRLF}part one${CRLF}--b${CRLF}Content-Transfer-Encoding: base64${CRLF}${CRLF}***not base64***${CRLF}`),
  });
  // Headers only, no blank line, no body: what some monitoring scripts send.
  cases.push({ name: 'headers-only', raw: Buffer.from(base('headers-only').join(CRLF)) });
  // Bare LF and a lone CR: Unix tools pipe mail with LF; the IMAP server
  // returns it with CRLF, so identity must not depend on line endings.
  cases.push({ name: 'bare-lf-no-message-id', raw: Buffer.from([...base('bare-lf', false), 'Content-Type: text/plain', '', 'line one', 'line\rtwo', ''].join('\n')) });

  // A 10 MB header: a single 10,000,000-byte header line before the
  // Message-ID (spam that pads headers to push the parser past its buffers).
  cases.push({
    name: '10mb-header',
    raw: eml(['From: Padder <padder@example.test>', `X-Padding: ${'p'.repeat(10_000_000)}`, 'Subject: hostile 10mb header', 'Date: Tue, 01 Oct 2024 10:00:00 +0000', 'Message-ID: <hostile-10mb-header@mail.example.test>', 'Content-Type: text/plain'], 'small body after a huge header\r\n'),
    overImapCap: true,
  });
  // An attachment past the IMAP cap: recorded as truncated (header block and a
  // note), never silently skipped.
  cases.push({ name: 'attachment-past-imap-cap', raw: attachment('att-imap', Math.ceil(limits.imapCapBytes * 0.75) + 512 * KiB), overImapCap: true });
  // An attachment past the HTTP body limit as well: the raw endpoint refuses
  // it (413), Mailgun's and SendGrid's larger limits take it truncated.
  cases.push({
    name: 'attachment-past-body-limit',
    raw: attachment('att-http', Math.ceil(limits.bodyLimitBytes * 0.75) + MiB),
    overImapCap: true,
    overBodyLimit: true,
  });

  // Broken charsets and encodings: an unknown charset, an encoded-word with a
  // bogus charset and bad base64, invalid quoted-printable, and raw Latin-1
  // bytes declared as UTF-8 (the most common real-world mislabel).
  cases.push({
    name: 'broken-charsets',
    raw: eml(
      [...base('charsets').filter((h) => !h.startsWith('Subject')), 'Subject: =?x-bogus-charset?B?////?= and =?utf-8?Q?broken=ZZ?= =?utf-8?B?w6k=?=', 'Content-Type: multipart/mixed; boundary=cs'],
      Buffer.concat([
        Buffer.from(`--cs${CRLF}Content-Type: text/plain; charset="x-unknown-charset"${CRLF}${CRLF}unknown charset text${CRLF}--cs${CRLF}Content-Type: text/plain; charset=utf-8${CRLF}Content-Transfer-Encoding: quoted-printable${CRLF}${CRLF}bad =ZZ qp =\r\n=E9=${CRLF}--cs${CRLF}Content-Type: text/plain; charset=utf-8${CRLF}${CRLF}`, 'latin1'),
        Buffer.from([0x4b, 0xf6, 0x6c, 0x6e, 0x20, 0xe9, 0xe8, 0xff, 0xfe]),
        Buffer.from(`${CRLF}--cs--${CRLF}`, 'latin1'),
      ]),
    ),
  });
  // The same breakage without a Message-ID: the fingerprint is taken over a
  // body that decodes badly, and must still be the same on every path.
  cases.push({
    name: 'broken-charsets-no-message-id',
    raw: eml([...base('charsets-noid', false), 'Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: base64'], `w6k=====*broken*base64${CRLF}`),
  });
  // ISO-2022-JP with a truncated escape sequence: stateful decoders have hung on it.
  cases.push({
    name: 'iso-2022-jp-truncated-escape',
    raw: eml([...base('iso2022'), 'Content-Type: text/plain; charset=iso-2022-jp'], Buffer.from([0x1b, 0x24, 0x42, 0x30, 0x21, 0x1b, 0x28, 0x0d, 0x0a])),
  });

  // Multipart nested 100 deep: recursive parsers blow their stack or their time budget.
  const deep = nested(100);
  const split = deep.indexOf(CRLF + CRLF);
  // The outermost part's Content-Type becomes the mail's own header.
  cases.push({ name: 'nested-100-deep', raw: eml([...base('nested'), deep.slice(0, split)], deep.slice(split + 4)) });

  // A Message-ID of 5,000 characters: ids are keys; an unbounded one must
  // neither break storage nor be silently cut into a colliding key.
  cases.push({
    name: 'message-id-5000-chars',
    raw: eml([...base('long-id', false), `Message-ID: <${'l'.repeat(5000 - '<@mail.example.test>'.length)}@mail.example.test>`, 'Content-Type: text/plain'], 'a mail with a very long id\r\n'),
  });
  // NUL bytes in a header and in the body (IMAP forbids them in literals;
  // Dovecot stores them anyway and hands them back changed).
  cases.push({
    name: 'nul-bytes',
    raw: eml([...base('nul').filter((h) => !h.startsWith('Subject')), 'Subject: nul\u0000in subject', 'Content-Type: text/plain'], 'body\u0000with\u0000nuls\r\n'),
  });
  // NUL bytes without a Message-ID: the fingerprint sees the body, so the
  // changed bytes must not change the key.
  cases.push({
    name: 'nul-bytes-no-message-id',
    raw: eml([...base('nul-noid', false), 'Content-Type: text/plain'], 'body\u0000with\u0000nuls\r\n'),
  });
  // Two different Message-ID headers: the first one is the identity, on every path.
  cases.push({
    name: 'two-message-ids',
    raw: eml([...base('two-ids'), 'Message-ID: <a-second-id@mail.example.test>', 'Content-Type: text/plain'], 'two ids\r\n'),
  });
  // A Message-ID folded over lines, with a comment and upper-case domain:
  // RFC 5322 CFWS that a careless reader keys differently per path.
  cases.push({
    name: 'message-id-folded-with-comment',
    raw: eml([...base('folded', false), 'Message-ID: (a comment)\r\n  <Folded.Id@MAIL.Example.TEST> ', 'Content-Type: text/plain'], 'folded id\r\n'),
  });
  // One 1 MiB line with no line break at all: neither headers nor a body separator.
  cases.push({ name: 'one-long-line', raw: Buffer.from(`X-Only: ${'o'.repeat(MiB)}`) });
  return cases;
}
