/**
 * Mailgun inbound routes (`forward("https://…")`).
 *
 * Format, as documented by Mailgun ("Receiving Messages via HTTP through a
 * forward() action", documentation.mailgun.com/docs/mailgun/user-manual/
 * receive-forward-store/receive-http):
 * - a form POST, `application/x-www-form-urlencoded`, or
 *   `multipart/form-data` when the mail has attachments;
 * - fully parsed: `sender` (MAIL FROM), `from` (the From header), `recipient`,
 *   `subject`, `body-plain` ("always present; if the message only has an HTML
 *   body, Mailgun will attempt to create a text representation"),
 *   `stripped-text`, `body-html`, and `message-headers`: "a list of MIME
 *   headers dumped to a JSON string (order of headers is preserved)", i.e.
 *   `[["Name", "value"], …]`;
 * - raw MIME ("the destination URL must end with mime"): the whole message in
 *   `body-mime`.
 * Every POST carries `timestamp`, `token` and `signature` ("Securing
 * Webhooks"): signature = hex HMAC-SHA256 of timestamp + token (no separator)
 * keyed with the webhook signing key.
 * Status codes: 200 = done; 406 = "rejected and it will not be retried"; any
 * other code is retried for 8 hours.
 */
import { createHmac } from 'node:crypto';
import { formFields } from './form-body';
import { secretEquals } from './credentials';
import type { WebhookMail, WebhookRequest } from './types';
import { WebhookError } from './webhook-error';

export interface MailgunOptions {
  signingKey: string;
  /** Accepted distance between the signed timestamp and now; default 300 s. */
  toleranceSeconds?: number;
  /** Clock in ms (tests). */
  now?: () => number;
}

export const MAILGUN_DEFAULT_TOLERANCE_SECONDS = 300;

/**
 * Checks the signature and the timestamp window. Returns the token, which the
 * caller claims once (replay refusal needs Redis, so it is not done here).
 */
export function verifyMailgun(req: WebhookRequest, opts: MailgunOptions): { token: string; timestamp: number } {
  const form = formFields(req);
  const timestamp = form.text('timestamp')?.trim();
  const token = form.text('token')?.trim();
  const signature = form.text('signature')?.trim().toLowerCase();
  if (!timestamp || !token || !signature) {
    throw new WebhookError('BAD_SIGNATURE', 'timestamp, token and signature are required');
  }
  const expected = createHmac('sha256', opts.signingKey).update(timestamp + token).digest('hex');
  if (!secretEquals(signature, expected)) throw new WebhookError('BAD_SIGNATURE', 'signature does not match the signing key');
  // Checked after the signature: only a genuine request learns that its timestamp was too old.
  const seconds = Number(timestamp);
  const tolerance = opts.toleranceSeconds ?? MAILGUN_DEFAULT_TOLERANCE_SECONDS;
  const nowSeconds = (opts.now ?? Date.now)() / 1000;
  if (!Number.isFinite(seconds) || Math.abs(nowSeconds - seconds) > tolerance) {
    throw new WebhookError('STALE_TIMESTAMP', `timestamp outside the ${tolerance} s window`, { timestamp });
  }
  return { token, timestamp: seconds };
}

function parseMessageHeaders(json: string | undefined): Array<[string, string]> {
  if (json === undefined) return [];
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new WebhookError('INVALID_PAYLOAD', 'message-headers is not JSON');
  }
  if (!Array.isArray(value)) throw new WebhookError('INVALID_PAYLOAD', 'message-headers is not a list of [name, value] pairs');
  const pairs: Array<[string, string]> = [];
  for (const entry of value) {
    if (Array.isArray(entry) && typeof entry[0] === 'string' && typeof entry[1] === 'string') pairs.push([entry[0], entry[1]]);
  }
  return pairs;
}

/** The mail of a (verified) Mailgun inbound POST: raw MIME when sent, else the parsed fields. */
export async function mailgunInbound(req: WebhookRequest, opts: { mailboxId: string }): Promise<WebhookMail> {
  const form = formFields(req);
  const mime = form.bytes('body-mime');
  if (mime !== undefined) {
    if (mime.length === 0) throw new WebhookError('INVALID_PAYLOAD', 'body-mime is empty');
    return { kind: 'raw', raw: mime };
  }
  const pairs = parseMessageHeaders(form.text('message-headers'));
  const headers = new Map<string, string>();
  for (const [name, value] of pairs) if (!headers.has(name.toLowerCase())) headers.set(name.toLowerCase(), value);
  const from = headers.get('from') ?? form.text('from');
  if (pairs.length === 0 && from === undefined) {
    throw new WebhookError('INVALID_PAYLOAD', 'neither body-mime nor message-headers/from: not a Mailgun inbound post');
  }
  // For an HTML-only mail Mailgun writes its own text rendering into
  // body-plain; the raw path renders the HTML with htmlToText instead. Hand
  // over only the HTML then, so a mail without Message-ID gets the same
  // fingerprint both ways. (A multipart mail without a text part cannot be
  // told apart from the headers; its fingerprint may differ.)
  const htmlOnly = /^\s*text\/html\b/i.test(headers.get('content-type') ?? '');
  const html = form.text('body-html');
  return {
    kind: 'parts',
    parts: {
      mailboxId: opts.mailboxId,
      // Mailgun also posts a top-level "Message-Id" field in parsed mode.
      messageIdHeader: headers.get('message-id') ?? form.text('Message-Id') ?? null,
      from: from ?? '',
      to: headers.get('to') ?? form.text('To') ?? form.text('recipient') ?? '',
      subject: headers.get('subject') ?? form.text('subject') ?? '',
      date: headers.get('date') ?? form.text('Date') ?? '',
      text: htmlOnly && html ? '' : (form.text('body-plain') ?? ''),
      html: html ?? '',
      headers: Object.fromEntries(headers),
      sizeBytes: req.rawBody.length,
    },
  };
}
