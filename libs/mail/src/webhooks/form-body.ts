import { decodeCharset } from '../encoded-words';
import { headerParams, multipartBoundary, parseMultipart, parseUrlEncoded, type FormField } from './multipart';
import type { WebhookRequest } from './types';
import { WebhookError } from './webhook-error';

/** Form fields by name (first occurrence wins), values kept as bytes. */
export class FormFields {
  private readonly byName = new Map<string, FormField>();

  constructor(readonly fields: readonly FormField[]) {
    for (const field of fields) if (!this.byName.has(field.name)) this.byName.set(field.name, field);
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  bytes(name: string): Buffer | undefined {
    return this.byName.get(name)?.data;
  }

  /** The field as text: in `charset` if given, else the part's own charset, else UTF-8. */
  text(name: string, charset?: string): string | undefined {
    const field = this.byName.get(name);
    if (!field) return undefined;
    return decodeCharset(field.data, charset ?? field.charset ?? 'utf-8');
  }
}

const parsed = new WeakMap<WebhookRequest, FormFields>();

/**
 * Parses a form body (multipart/form-data or urlencoded), once per request:
 * signature checks and the adapter read the same fields.
 */
export function formFields(req: WebhookRequest): FormFields {
  const cached = parsed.get(req);
  if (cached) return cached;
  const contentType = req.contentType ?? '';
  const type = headerParams(contentType).value;
  let fields: FormField[];
  if (type === 'multipart/form-data') {
    const boundary = multipartBoundary(contentType);
    if (!boundary) throw new WebhookError('INVALID_PAYLOAD', 'multipart/form-data without a usable boundary');
    fields = parseMultipart(req.rawBody, boundary);
  } else if (type === 'application/x-www-form-urlencoded') {
    fields = parseUrlEncoded(req.rawBody);
  } else {
    throw new WebhookError('UNSUPPORTED_MEDIA_TYPE', `expected a form body, got "${type || 'no content type'}"`);
  }
  const form = new FormFields(fields);
  parsed.set(req, form);
  return form;
}

/** First value of a request header. */
export function headerOf(req: WebhookRequest, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}
