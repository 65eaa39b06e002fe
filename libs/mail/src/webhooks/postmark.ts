/**
 * Postmark inbound webhook.
 *
 * Format, as documented by Postmark ("Inbound webhook",
 * postmarkapp.com/developer/webhooks/inbound-webhook, and the `InboundWebhook`
 * type of the official `postmark` npm client): a JSON POST with `From`,
 * `FromName`, `FromFull {Email, Name}`, `To`, `ToFull`, `Cc`, `Subject`,
 * `Date` (as the sending server wrote it), `MessageID`, `TextBody`,
 * `HtmlBody`, `StrippedTextReply`, `Headers: [{Name, Value}]`, `Attachments`,
 * and `RawEmail` when the stream's "include raw email content" option is on.
 *
 * Identity: `MessageID` is Postmark's own id for this inbound message, not
 * the mail's Message-ID; keying on it would give the webhook copy a
 * different key than the IMAP copy. The mail's Message-ID is in `Headers`.
 *
 * Retries ("Parse an email", postmarkapp.com/developer/user-guide/inbound/
 * parse-an-email): any non-200 is retried (10 times, growing intervals);
 * "if we receive a 403 response, we will stop retries".
 *
 * Auth: Postmark has no signature for inbound; it supports basic-auth
 * credentials in the webhook URL (https://user:pass@host/…), which arrive as
 * an `Authorization: Basic` header.
 */
import { basicAuthMatches } from './credentials';
import { headerOf } from './form-body';
import type { WebhookMail, WebhookRequest } from './types';
import { WebhookError } from './webhook-error';

export interface PostmarkOptions {
  username: string;
  password: string;
}

export function verifyPostmark(req: WebhookRequest, opts: PostmarkOptions): void {
  if (!basicAuthMatches(req, opts)) throw new WebhookError('UNAUTHORIZED', 'basic auth credentials missing or wrong');
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function formatAddress(full: unknown, fallback: string | undefined): string {
  if (full && typeof full === 'object') {
    const email = str((full as { Email?: unknown }).Email) ?? '';
    const name = str((full as { Name?: unknown }).Name)?.trim() ?? '';
    // Quoted, so a name with a comma or "@" stays one display name.
    if (email && name) return `"${name.replace(/(["\\])/g, '\\$1')}" <${email}>`;
    if (email) return email;
  }
  return fallback ?? '';
}

/** The mail of an (authenticated) Postmark inbound POST: `RawEmail` when present, else the fields. */
export async function postmarkInbound(req: WebhookRequest, opts: { mailboxId: string }): Promise<WebhookMail> {
  const type = (req.contentType ?? headerOf(req, 'content-type') ?? '').toLowerCase();
  if (!type.startsWith('application/json')) {
    throw new WebhookError('UNSUPPORTED_MEDIA_TYPE', `expected application/json, got "${type || 'no content type'}"`);
  }
  let body: unknown;
  try {
    body = JSON.parse(req.rawBody.toString('utf8'));
  } catch {
    throw new WebhookError('INVALID_PAYLOAD', 'body is not JSON');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new WebhookError('INVALID_PAYLOAD', 'body is not a JSON object');
  const b = body as Record<string, unknown>;

  const raw = str(b.RawEmail);
  if (raw) return { kind: 'raw', raw: Buffer.from(raw, 'utf8') };

  if (b.Headers !== undefined && !Array.isArray(b.Headers)) throw new WebhookError('INVALID_PAYLOAD', 'Headers is not a list');
  const headers = new Map<string, string>();
  for (const h of (b.Headers as unknown[] | undefined) ?? []) {
    const name = str((h as { Name?: unknown } | null)?.Name);
    const value = str((h as { Value?: unknown } | null)?.Value);
    if (name && value !== undefined && !headers.has(name.toLowerCase())) headers.set(name.toLowerCase(), value);
  }
  const from = formatAddress(b.FromFull, str(b.From));
  if (!from && str(b.Subject) === undefined && headers.size === 0) {
    throw new WebhookError('INVALID_PAYLOAD', 'no From, Subject or Headers: not a Postmark inbound message');
  }
  // Postmark lifts these out of Headers; put them back so routes can match on any header.
  const lifted: Array<[string, string | undefined]> = [
    ['from', from],
    ['to', str(b.To)],
    ['cc', str(b.Cc)],
    ['subject', str(b.Subject)],
    ['date', str(b.Date)],
  ];
  for (const [name, value] of lifted) if (value && !headers.has(name)) headers.set(name, value);

  return {
    kind: 'parts',
    parts: {
      mailboxId: opts.mailboxId,
      // Never b.MessageID: that is Postmark's id, not the mail's.
      messageIdHeader: headers.get('message-id') ?? null,
      from,
      to: str(b.To) ?? headers.get('to') ?? '',
      subject: str(b.Subject) ?? headers.get('subject') ?? '',
      date: str(b.Date) ?? headers.get('date') ?? '',
      text: str(b.TextBody) ?? '',
      html: str(b.HtmlBody) ?? '',
      headers: Object.fromEntries(headers),
      sizeBytes: req.rawBody.length,
    },
  };
}
