import type { MailParts } from '../mail-input';

/** One inbound webhook call as the HTTP layer received it. */
export interface WebhookRequest {
  /** The body exactly as received (signatures and charsets need the bytes). */
  rawBody: Buffer;
  /** Lower-cased header names, as Node delivers them. */
  headers: Record<string, string | string[] | undefined>;
  query: Record<string, string>;
  /** The Content-Type header value, e.g. `multipart/form-data; boundary=…`. */
  contentType?: string;
}

/**
 * What an adapter makes of a webhook: the raw MIME when the provider sent it
 * (the same bytes IMAP would fetch, so the same message key by construction),
 * else the fields, which `mailInputFromParts` keys the same way.
 */
export type WebhookMail = { kind: 'raw'; raw: Buffer } | { kind: 'parts'; parts: MailParts };

export type InboundProviderName = 'mailgun' | 'postmark' | 'sendgrid';
