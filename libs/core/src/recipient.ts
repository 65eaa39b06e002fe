/**
 * Per-channel recipient checks, applied when the decision fans out. A
 * recipient that fails one never reaches a provider: it would either be
 * refused there (a wasted attempt) or, worse, be taken as it is (`"a\r\nBcc:
 * evil@x"` is a header injection in a mail and a log-forging line in a log).
 */

/**
 * How a channel's recipients are checked: `email` for channels with a mail
 * provider (smtp, ses, sendgrid), `phone` (E.164) for SMS, `slack` (a
 * conversation or user id) for Slack, `whatsapp` (E.164, bare or with the
 * `whatsapp:` channel prefix) for WhatsApp, `text` for the others.
 */
export type RecipientKind = 'email' | 'phone' | 'whatsapp' | 'slack' | 'text';

/** E.164: `+`, country code, subscriber number; 8 to 15 digits in all. */
export const E164 = /^\+[1-9]\d{7,14}$/;

/** A WhatsApp address as Twilio writes it: `whatsapp:` + E.164; the bare number is accepted too. */
export const WHATSAPP_RECIPIENT = /^(?:whatsapp:)?\+[1-9]\d{7,14}$/;

/** Slack conversation ids (C… public, G… private, D… direct) and user ids (U…, W…). */
export const SLACK_RECIPIENT = /^[CGDUW][A-Z0-9]{6,}$/;

/** Longest recipient on a non-mail channel (a URL, a user id, a phone number). */
export const MAX_TEXT_RECIPIENT = 512;

// C0 controls, DEL and C1 controls: never part of an address or an id.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// RFC 5321 section 4.1.2 (Dot-string and Quoted-string) with RFC 6531's UTF-8.
const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~\\-\\u00a0-\\uffff]+";
const DOT_STRING = new RegExp(`^${ATOM}(?:\\.${ATOM})*$`);
const QUOTED_STRING = /^"(?:[\u0020\u0021\u0023-\u005b\u005d-\u007e\u00a0-\uffff]|\\[\u0020-\u007e])*"$/;
// RFC 5321 4.1.2 Domain (with UTF-8 labels) or an address literal.
const LABEL = '[A-Za-z0-9\\u00a0-\\uffff](?:[A-Za-z0-9\\-\\u00a0-\\uffff]{0,61}[A-Za-z0-9\\u00a0-\\uffff])?';
const DOMAIN = new RegExp(`^${LABEL}(?:\\.${LABEL})*$`);
const ADDRESS_LITERAL = /^\[[\u0021-\u005a\u005e-\u007e]+\]$/;

/** Why `recipient` cannot be sent to on a channel of `kind`, or undefined when it can. */
export function recipientProblem(kind: RecipientKind, recipient: string): string | undefined {
  if (CONTROL.test(recipient)) return 'contains a control character';
  if (kind === 'text') return recipient.length > MAX_TEXT_RECIPIENT ? `longer than ${MAX_TEXT_RECIPIENT} characters` : undefined;
  if (kind === 'phone') return E164.test(recipient) ? undefined : 'is not an E.164 phone number (+14155550100)';
  if (kind === 'whatsapp') return WHATSAPP_RECIPIENT.test(recipient) ? undefined : 'is not a WhatsApp number (+14155550100 or whatsapp:+14155550100)';
  if (kind === 'slack') return SLACK_RECIPIENT.test(recipient) ? undefined : 'is not a Slack conversation or user id (C…, G…, D…, U…, W…)';
  // RFC 5321 4.5.3.1: path at most 256 octets including the angle brackets; local part 64.
  if (Buffer.byteLength(recipient, 'utf8') > 254) return 'longer than 254 octets (RFC 5321)';
  const at = recipient.lastIndexOf('@');
  if (at <= 0 || at === recipient.length - 1) return 'is not an address (local-part@domain)';
  const local = recipient.slice(0, at);
  const domain = recipient.slice(at + 1);
  if (Buffer.byteLength(local, 'utf8') > 64) return 'local part longer than 64 octets (RFC 5321)';
  if (!DOT_STRING.test(local) && !QUOTED_STRING.test(local)) return 'local part is not a dot-string or quoted string (RFC 5321)';
  if (!DOMAIN.test(domain) && !ADDRESS_LITERAL.test(domain)) return 'domain is not a valid domain name or address literal (RFC 5321)';
  return undefined;
}
