/**
 * The one place a mail becomes identity + summary.
 *
 * Every ingest path ends here: the raw MIME path (IMAP, `message/rfc822`
 * webhooks) after parsing, and provider webhooks (Postmark JSON, Mailgun and
 * SendGrid parsed forms) that hand over fields without the raw message. The
 * same mail arriving both ways must get the same message key (docs/protocol.md
 * invariant 1), so both paths run the same decoding, capping and identity
 * code below rather than two copies that could drift.
 */
import { fallbackFingerprint, mailMessageKey, normalizeMessageId, type MailInput } from '@singleshot/core';
import { formatAddressList } from './addresses';
import { MAIL_LIMITS, capChars, cleanText, stripNul } from './bounded-text';
import { decodeEncodedWords } from './encoded-words';
import { htmlToText } from './html-text';

/** Why a mail was keyed by fingerprint instead of its Message-ID. */
export type IdentityFallbackReason = 'missing' | 'malformed' | 'too_long';

/** Identity and bounded summary of one mail. */
export interface ParsedMail {
  /** Message key (64 hex chars): from the Message-ID, else the fallback fingerprint. */
  messageKey: string;
  input: MailInput;
  /** Set when the fingerprint was used; callers count it in a metric (docs/protocol.md). */
  identityFallbackReason?: IdentityFallbackReason;
}

/** A mail as a provider webhook (or the raw parser) delivers it: fields, not MIME. */
export interface MailParts {
  mailboxId: string;
  /**
   * The Message-ID header value as received (brackets, comments and folding
   * allowed). `undefined`: look it up in `headers`; `null`: the mail has none.
   */
  messageIdHeader?: string | null;
  /** From header value: raw (`=?utf-8?…?= <a@b>`) or decoded (`"Name" <a@b>`). */
  from: string;
  to: string;
  subject: string;
  /** The Date header as sent, not the receive time. */
  date: string;
  /** Decoded text body; empty or missing when the mail has only HTML. */
  text?: string | null;
  html?: string | null;
  /** Header name → first value. Names are matched case-insensitively. */
  headers: Record<string, string>;
  sizeBytes: number;
  /** Why the summary is partial (truncated, parse failure); kept on the input. */
  note?: string;
}

export interface MailInputOptions {
  /** Length of `input.excerpt`; default 500. */
  excerptChars?: number;
}

/** The parts that decide a mail's identity. */
export type IdentityParts = Pick<MailParts, 'mailboxId' | 'messageIdHeader' | 'from' | 'subject' | 'date' | 'text' | 'html' | 'headers'>;

export interface MailIdentity {
  messageKey: string;
  /** Normalized Message-ID, or null when the fingerprint was used. */
  messageId: string | null;
  identity: MailInput['identity'];
  identityFallbackReason?: IdentityFallbackReason;
}

interface CleanFields {
  from: string;
  subject: string;
  date: string;
  /** The decoded body the fingerprint hashes: text part, else HTML as text, else ''. */
  body: string;
}

/** First value of `name` in a header record, whatever case the provider used. */
function headerValue(headers: Record<string, string>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name && typeof value === 'string') return value;
  }
  return undefined;
}

function workText(value: string | null | undefined): string {
  return capChars(stripNul(value ?? ''), MAIL_LIMITS.maxWorkChars);
}

function cleanFields(parts: IdentityParts): CleanFields {
  const text = stripNul(parts.text ?? '');
  const html = stripNul(parts.html ?? '');
  return {
    from: cleanText(formatAddressList(workText(parts.from)), MAIL_LIMITS.maxAddressChars),
    subject: cleanText(decodeEncodedWords(workText(parts.subject)), MAIL_LIMITS.maxSubjectChars),
    date: cleanText(workText(parts.date), MAIL_LIMITS.maxDateChars),
    body: text.trim() !== '' ? text : html.trim() !== '' ? htmlToText(html) : '',
  };
}

function identityOf(parts: IdentityParts, fields: CleanFields): MailIdentity {
  const header = parts.messageIdHeader === undefined ? headerValue(parts.headers, 'message-id') : parts.messageIdHeader;
  const normalized = normalizeMessageId(header == null ? header : workText(header));
  if (normalized.ok) {
    return { messageKey: mailMessageKey(parts.mailboxId, normalized.id), messageId: normalized.id, identity: 'message-id' };
  }
  // U+FFFD stands for bytes the part's charset could not decode, and such
  // bytes differ between paths: IMAP forbids NUL in a message, so Dovecot
  // hands each NUL back as 0x80 (undecodable in UTF-8 and US-ASCII), while a
  // webhook carries the NUL itself (which stripNul drops). Leaving both out of
  // the hash gives the IMAP and webhook copies of such a mail one key.
  const messageKey = fallbackFingerprint({ mailboxId: parts.mailboxId, ...fields, body: fields.body.replace(/\uFFFD/g, '') });
  return { messageKey, messageId: null, identity: 'fingerprint', identityFallbackReason: normalized.reason };
}

/**
 * The message key of a mail given as fields: from its Message-ID when usable,
 * else the fallback fingerprint over from/subject/date/body. Equal to the key
 * `parseRawMail` computes for the same mail.
 */
export function messageKeyFromParts(parts: IdentityParts): MailIdentity {
  return identityOf(parts, cleanFields(parts));
}

function boundedHeaders(headers: Record<string, string>): Record<string, string> {
  // A Map, then fromEntries: a header named "__proto__" stays an own property
  // instead of being swallowed by (or tampering with) the prototype setter.
  const kept = new Map<string, string>();
  for (const [rawName, rawValue] of Object.entries(headers)) {
    if (kept.size >= MAIL_LIMITS.maxHeaders) break;
    if (typeof rawValue !== 'string') continue;
    const name = cleanText(rawName, MAIL_LIMITS.maxHeaderNameChars).toLowerCase();
    if (name === '' || kept.has(name)) continue;
    kept.set(name, cleanText(decodeEncodedWords(workText(rawValue)), MAIL_LIMITS.maxHeaderValueChars));
  }
  return Object.fromEntries(kept);
}

function excerptOf(body: string, chars: number): string {
  const flat = body.replace(/\r\n?/g, '\n').replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n');
  return cleanText(flat, chars);
}

/**
 * Builds the identity and bounded summary of a mail from its fields. Provider
 * webhook adapters call this directly; `parseRawMail` calls it after parsing,
 * so both agree on the key and the summary by construction.
 */
export function mailInputFromParts(parts: MailParts, opts: MailInputOptions = {}): ParsedMail {
  const fields = cleanFields(parts);
  const id = identityOf(parts, fields);
  const excerptChars = Math.max(0, Math.floor(opts.excerptChars ?? MAIL_LIMITS.excerptChars));
  const input: MailInput = {
    kind: 'mail',
    source: 'mail',
    mailboxId: parts.mailboxId,
    messageId: id.messageId,
    identity: id.identity,
    from: fields.from,
    to: cleanText(formatAddressList(workText(parts.to)), MAIL_LIMITS.maxAddressChars),
    subject: fields.subject,
    date: fields.date,
    excerpt: excerptOf(fields.body, excerptChars),
    headers: boundedHeaders(parts.headers),
    sizeBytes: parts.sizeBytes,
  };
  if (parts.note) input.note = cleanText(parts.note, MAIL_LIMITS.maxNoteChars);
  const result: ParsedMail = { messageKey: id.messageKey, input };
  if (id.identityFallbackReason) result.identityFallbackReason = id.identityFallbackReason;
  return result;
}
