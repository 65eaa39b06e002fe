/**
 * SendGrid Inbound Parse webhook.
 *
 * Format, as documented by Twilio SendGrid ("Inbound Email Parse Webhook",
 * twilio.com/docs/sendgrid/for-developers/parsing-email/inbound-email): a
 * `multipart/form-data` POST.
 * - default (parsed): `headers` (the raw header block), `text`, `html`,
 *   `from`, `to`, `cc`, `subject`, `envelope` (JSON `{to: [...], from}`),
 *   `charsets` (JSON: the character set of each extracted field), `dkim`,
 *   `SPF`, `spam_score`, attachments;
 * - with "POST the raw, full MIME message" on: the whole message in `email`.
 * The parsed fields are posted in the mail's own charsets, as `charsets`
 * says (e.g. `{"text":"iso-8859-1", …}`), not always UTF-8, so each field is
 * decoded with its declared charset.
 *
 * Retries: "SendGrid automatically queues and retries any POSTs that respond
 * with a 5XX status"; a 2xx ends it, and a 4xx is not retried.
 *
 * Auth: SendGrid signs nothing on Inbound Parse, so a shared secret is
 * required: basic-auth credentials in the URL, or `?token=` in the URL.
 */
import { decodeCharset } from '../encoded-words';
import { firstHeaderValues, parseHeaderBlock } from '../raw-headers';
import { basicAuthMatches, secretEquals } from './credentials';
import { formFields } from './form-body';
import type { WebhookMail, WebhookRequest } from './types';
import { WebhookError } from './webhook-error';

export interface SendgridOptions {
  username?: string;
  password?: string;
  token?: string;
}

export function verifySendgrid(req: WebhookRequest, opts: SendgridOptions): void {
  const byToken = opts.token !== undefined && opts.token !== '' && typeof req.query.token === 'string' && secretEquals(req.query.token, opts.token);
  const byBasic =
    opts.username !== undefined && opts.password !== undefined && basicAuthMatches(req, { username: opts.username, password: opts.password });
  if (!byToken && !byBasic) throw new WebhookError('UNAUTHORIZED', 'shared secret missing or wrong (basic auth or ?token=)');
}

function parseCharsets(json: string | undefined): Record<string, string> {
  if (!json) return {};
  try {
    const value: unknown = JSON.parse(json);
    if (!value || typeof value !== 'object' || Array.isArray(value)) return {};
    return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch {
    // A broken charsets field must not lose the mail: fall back to UTF-8.
    return {};
  }
}

/** The mail of an (authenticated) SendGrid Inbound Parse POST: `email` when raw, else the fields. */
export async function sendgridInbound(req: WebhookRequest, opts: { mailboxId: string }): Promise<WebhookMail> {
  const form = formFields(req);
  const raw = form.bytes('email');
  if (raw !== undefined) {
    if (raw.length === 0) throw new WebhookError('INVALID_PAYLOAD', 'email is empty');
    return { kind: 'raw', raw };
  }
  const block = form.bytes('headers');
  if (block === undefined && !form.has('from')) {
    throw new WebhookError('INVALID_PAYLOAD', 'neither email nor headers/from: not a SendGrid Inbound Parse post');
  }
  const charsets = parseCharsets(form.text('charsets'));
  const field = (name: string) => {
    const bytes = form.bytes(name);
    return bytes === undefined ? undefined : decodeCharset(bytes, charsets[name] ?? 'utf-8');
  };
  // The header block is read the way the raw MIME path reads a message's
  // header block (same function), so identity fields come out identical.
  const headers = block ? firstHeaderValues(parseHeaderBlock(block)) : new Map<string, string>();
  return {
    kind: 'parts',
    parts: {
      mailboxId: opts.mailboxId,
      messageIdHeader: headers.get('message-id') ?? null,
      from: headers.get('from') ?? field('from') ?? '',
      to: headers.get('to') ?? field('to') ?? '',
      subject: headers.get('subject') ?? field('subject') ?? '',
      date: headers.get('date') ?? '',
      text: field('text') ?? '',
      html: field('html') ?? '',
      headers: Object.fromEntries(headers),
      sizeBytes: req.rawBody.length,
    },
  };
}
