import { sha256Hex } from './hash';

/**
 * Fallback fingerprint for mail without a usable Message-ID (docs/protocol.md). A
 * compromise: two identical automated mails collide. Use only when no stable id
 * exists, and count each use.
 */
export interface FingerprintInput {
  mailboxId: string;
  from: string;
  subject: string;
  /** The Date header as sent (not the receive time). */
  date: string;
  /** The decoded body text the sender wrote (text part, else HTML, else empty). */
  body: string;
}

/** Lower-cased, whitespace-collapsed address list, sorted so header order does not matter. */
export function normalizeAddressList(value: string): string {
  const addresses = value.match(/[^\s<>,;"()]+@[^\s<>,;"()]+/g);
  if (!addresses || addresses.length === 0) return value.trim().replace(/\s+/g, ' ').toLowerCase();
  return [...new Set(addresses.map((a) => a.toLowerCase()))].sort().join(',');
}

/** Subjects are compared after unfolding and whitespace collapse; case is kept. */
export function normalizeSubject(value: string): string {
  return value.replace(/\r?\n[ \t]+/g, ' ').replace(/\s+/g, ' ').trim();
}

/** Dates compare as instants when parseable (timezone spelling varies across relays). */
export function normalizeDate(value: string): string {
  const trimmed = value.replace(/\s+/g, ' ').trim();
  const ms = Date.parse(trimmed);
  return Number.isNaN(ms) ? trimmed : new Date(ms).toISOString();
}

/** CRLF/CR → LF, trailing whitespace per line and at the end removed. */
export function canonicalBody(body: string): string {
  return body
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.replace(/[ \t]+$/, ''))
    .join('\n')
    .replace(/\n+$/, '');
}

export function fallbackFingerprint(input: FingerprintInput): string {
  return sha256Hex(
    [
      input.mailboxId,
      normalizeAddressList(input.from),
      normalizeSubject(input.subject),
      normalizeDate(input.date),
      sha256Hex(canonicalBody(input.body)),
    ].join('\n'),
  );
}
