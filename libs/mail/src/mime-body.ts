/**
 * The MIME body parse, bounded in time and guarded against parser failure.
 *
 * mailparser runs in this process, so a timer alone cannot stop it: a timer
 * only fires when the parser yields. The raw message is therefore fed in
 * chunks with `setImmediate` between them, which lets the timer run, and the
 * deadline is also checked before each chunk. On timeout the source stream is
 * destroyed, which makes simpleParser destroy its parser and stop.
 *
 * The conversions that are costly on hostile input and that we do not need
 * are switched off: HTML→text (done by our linear `htmlToText` instead, the
 * same one the webhook path uses), text→HTML, link detection and `cid:`
 * inlining (which would copy every inline image into the HTML as base64).
 */
import { Readable } from 'node:stream';
import { simpleParser, type SimpleParserOptions } from 'mailparser';
import { MAIL_LIMITS, capChars } from './bounded-text';

/** 64 KiB keeps each synchronous slice of parser work short. */
const CHUNK_BYTES = 64 * 1024;

const PARSER_OPTIONS: SimpleParserOptions = {
  skipHtmlToText: true,
  skipTextToHtml: true,
  skipTextLinks: true,
  skipImageLinks: true,
  keepCidLinks: true,
  checksumAlgo: false,
};

/** The decoded text and HTML bodies of a mail. */
export interface MimeBody {
  text: string;
  html: string;
}

export type MimeBodyResult =
  | { ok: true; body: MimeBody }
  | { ok: false; code: 'MAIL_PARSE_TIMEOUT' | 'MAIL_PARSE_FAILED'; detail: string };

/** Raised into the parser's source stream to stop a parse past its deadline. */
export class MailParseTimeoutError extends Error {
  readonly code = 'MAIL_PARSE_TIMEOUT';
  constructor(timeoutMs: number) {
    super(`parse timed out after ${timeoutMs} ms`);
    this.name = 'MailParseTimeoutError';
  }
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return capChars(String(err), MAIL_LIMITS.maxNoteChars);
  const code: unknown = (err as Error & { code?: unknown }).code;
  return capChars((typeof code === 'string' ? `${code}: ` : '') + err.message, MAIL_LIMITS.maxNoteChars);
}

/**
 * Parses the bodies of `raw` with mailparser within `timeoutMs`. Never throws
 * and never rejects: a parser error or the deadline comes back as `ok: false`,
 * so the caller can still summarize the mail from its headers.
 */
export async function parseMimeBody(raw: Buffer, opts: { timeoutMs: number }): Promise<MimeBodyResult> {
  const deadline = Date.now() + opts.timeoutMs;
  const timeoutError = new MailParseTimeoutError(opts.timeoutMs);
  let offset = 0;
  const source = new Readable({
    read() {
      setImmediate(() => {
        if (this.destroyed) return;
        if (Date.now() >= deadline) {
          this.destroy(timeoutError);
          return;
        }
        if (offset >= raw.length) {
          this.push(null);
          return;
        }
        const end = Math.min(raw.length, offset + CHUNK_BYTES);
        this.push(raw.subarray(offset, end));
        offset = end;
      });
    },
  });

  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<MimeBodyResult>((resolve) => {
    timer = setTimeout(() => {
      source.destroy(timeoutError);
      resolve({ ok: false, code: 'MAIL_PARSE_TIMEOUT', detail: timeoutError.message });
    }, opts.timeoutMs);
  });

  let parsed: Promise<MimeBodyResult>;
  try {
    parsed = simpleParser(source, PARSER_OPTIONS).then(
      (mail): MimeBodyResult => ({
        ok: true,
        body: { text: mail.text ?? '', html: typeof mail.html === 'string' ? mail.html : '' },
      }),
      (err: unknown): MimeBodyResult =>
        err === timeoutError
          ? { ok: false, code: 'MAIL_PARSE_TIMEOUT', detail: timeoutError.message }
          : { ok: false, code: 'MAIL_PARSE_FAILED', detail: `parse failed: ${describe(err)}` },
    );
  } catch (err) {
    parsed = Promise.resolve({ ok: false, code: 'MAIL_PARSE_FAILED', detail: `parse failed: ${describe(err)}` });
  }

  try {
    return await Promise.race([parsed, timedOut]);
  } finally {
    clearTimeout(timer);
    if (!source.destroyed) source.destroy();
  }
}
