/**
 * Reading header fields straight from raw MIME bytes.
 *
 * Identity comes from the Message-ID exactly as the sender wrote it, so it is
 * read here rather than taken from a MIME parser: parsers decode, merge
 * duplicates (mailparser keeps the *last* of some repeated headers), drop
 * values they cannot parse, or stop at a size limit, and any of that would move
 * the message key. The same raw bytes always give the same fields here.
 */

/** One header field as written: name as spelled, value unfolded and trimmed. */
export interface RawHeader {
  name: string;
  value: string;
}

/** RFC 5322 field-name: printable US-ASCII except the colon. */
const FIELD_NAME = /^[\x21-\x39\x3b-\x7e]+$/;
const ASCII_ONLY = /^[\x00-\x7f]*$/;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

const LF = 0x0a;
const CR = 0x0d;

/**
 * The header block of a raw message: every byte before the first empty line.
 * A message without an empty line is all header block (mailparser reads it
 * the same way); one that starts with an empty line has no headers. At most
 * `maxBytes` bytes are returned, so an over-sized mail still yields a bounded
 * block.
 */
export function extractHeaderBlock(raw: Uint8Array, maxBytes: number = Number.POSITIVE_INFINITY): Buffer {
  const buf = Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  if (buf[0] === LF || (buf[0] === CR && buf[1] === LF)) return buf.subarray(0, 0);
  const window = buf.length > maxBytes ? buf.subarray(0, maxBytes) : buf;
  const lfLf = window.indexOf('\n\n');
  const lfCrLf = window.indexOf('\n\r\n');
  const ends = [lfLf, lfCrLf].filter((i) => i >= 0);
  if (ends.length === 0) return window;
  // Keep the last header line's own line break out: the block ends at its LF.
  return window.subarray(0, Math.min(...ends));
}

/**
 * Header bytes are US-ASCII by the RFC, UTF-8 under RFC 6532, and Latin-1 or
 * worse in practice. Each value is read as UTF-8 when it is valid UTF-8 and as
 * Latin-1 otherwise, so one stray byte spoils only its own header.
 */
function decodeHeaderBytes(latin1: string): string {
  if (ASCII_ONLY.test(latin1)) return latin1;
  try {
    return strictUtf8.decode(Buffer.from(latin1, 'latin1'));
  } catch {
    return latin1;
  }
}

/**
 * Splits a header block into fields, in order, duplicates kept. Continuation
 * lines (starting with space or tab) are unfolded by removing the line break
 * only, as RFC 5322 3.2.2 says. Lines that are not `name: value` (an mbox
 * `From ` line, garbage) are skipped together with their continuations.
 */
export function parseHeaderBlock(block: Uint8Array): RawHeader[] {
  const text = Buffer.from(block.buffer, block.byteOffset, block.byteLength).toString('latin1');
  const headers: RawHeader[] = [];
  let name: string | null = null;
  let parts: string[] = [];
  const flush = (): void => {
    if (name !== null) headers.push({ name, value: decodeHeaderBytes(parts.join('')).trim() });
    name = null;
    parts = [];
  };
  for (const line of text.split(/\r?\n/)) {
    if (line.startsWith(' ') || line.startsWith('\t')) {
      if (name !== null) parts.push(line);
      continue;
    }
    flush();
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    // obs-optional (RFC 5322 4.5.1): whitespace between the name and the colon.
    const candidate = line.slice(0, colon).replace(/[ \t]+$/, '');
    if (!FIELD_NAME.test(candidate)) continue;
    name = candidate;
    parts = [line.slice(colon + 1)];
  }
  flush();
  return headers;
}

/** Lower-cased name → first value, in the order the names first appear. */
export function firstHeaderValues(headers: readonly RawHeader[]): Map<string, string> {
  const first = new Map<string, string>();
  for (const { name, value } of headers) {
    const key = name.toLowerCase();
    if (!first.has(key)) first.set(key, value);
  }
  return first;
}

/**
 * The first value of header `name` (case-insensitive) in a raw message,
 * unfolded and trimmed, or null when the message has no such header.
 */
export function readRawHeader(raw: Uint8Array, name: string): string | null {
  const wanted = name.toLowerCase();
  const found = parseHeaderBlock(extractHeaderBlock(raw)).find((h) => h.name.toLowerCase() === wanted);
  return found ? found.value : null;
}
