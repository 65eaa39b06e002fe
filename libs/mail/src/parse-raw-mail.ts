/**
 * Raw MIME → identity + bounded summary: what every raw mail ingest path
 * (IMAP fetch, `message/rfc822` webhook) calls.
 *
 * Nothing is ever dropped (docs/protocol.md invariant 7): an over-sized mail, a
 * parser error or a parse past its deadline still yields a summary built from
 * the header block, with a `note` saying what was left out.
 */
import { MAIL_LIMITS } from './bounded-text';
import { mailInputFromParts, type ParsedMail } from './mail-input';
import { parseMimeBody, type MimeBody } from './mime-body';
import { extractHeaderBlock, firstHeaderValues, parseHeaderBlock } from './raw-headers';

export interface ParseRawMailOptions {
  /** Configured mailbox the mail arrived in; part of the message key. */
  mailboxId: string;
  /** Larger mails are summarized from their header block only; default 25 MiB. */
  maxBytes?: number;
  /** Length of `input.excerpt`; default 500. */
  excerptChars?: number;
  /** Budget for the body parse; past it the summary is header-only; default 20 000. */
  parseTimeoutMs?: number;
}

/**
 * Parses one raw message into its message key and a size-bounded `MailInput`.
 * Never rejects on hostile input (oversized, malformed, deeply nested, bad
 * charsets, NUL bytes, empty): the worst case is a header-only summary with a
 * note. The Message-ID is read from the raw header block, not from the parser.
 *
 * Known limit: a mail without a usable Message-ID whose body parse times out
 * is fingerprinted with an empty body, so a later arrival that parses in time
 * gets another key. Parser errors and the size cap are deterministic; only a
 * timeout depends on load, and the default budget is far above what the
 * bounded parse of a 25 MiB mail needs.
 */
export async function parseRawMail(raw: Buffer, opts: ParseRawMailOptions): Promise<ParsedMail> {
  const maxBytes = opts.maxBytes ?? MAIL_LIMITS.maxBytes;
  const timeoutMs = Math.max(0, opts.parseTimeoutMs ?? MAIL_LIMITS.parseTimeoutMs);
  const data = Buffer.isBuffer(raw) ? raw : Buffer.from(raw);

  const first = firstHeaderValues(parseHeaderBlock(extractHeaderBlock(data, maxBytes)));

  let body: MimeBody = { text: '', html: '' };
  let note: string | undefined;
  if (data.length > maxBytes) {
    note = `truncated: ${data.length - maxBytes} bytes over cap`;
  } else if (data.length > 0) {
    const result = await parseMimeBody(data, { timeoutMs });
    if (result.ok) body = result.body;
    else note = `header-only summary: ${result.detail}`;
  }

  return mailInputFromParts(
    {
      mailboxId: opts.mailboxId,
      messageIdHeader: first.get('message-id') ?? null,
      from: first.get('from') ?? '',
      to: first.get('to') ?? '',
      subject: first.get('subject') ?? '',
      date: first.get('date') ?? '',
      text: body.text,
      html: body.html,
      headers: Object.fromEntries(first),
      sizeBytes: data.length,
      ...(note ? { note } : {}),
    },
    { excerptChars: opts.excerptChars ?? MAIL_LIMITS.excerptChars },
  );
}
