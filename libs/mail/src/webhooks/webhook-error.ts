import { SingleshotError } from '@singleshot/core';

/**
 * Why an inbound webhook was refused. The route maps each code to the
 * provider's HTTP semantics (which status stops its retries, which one asks
 * for a retry); see `PROVIDER_STATUS`.
 */
export type WebhookErrorCode =
  /** Missing or wrong credentials (basic auth, URL token). */
  | 'UNAUTHORIZED'
  /** Signature fields missing or not matching the signing key. */
  | 'BAD_SIGNATURE'
  /** Signed timestamp outside the tolerance window. */
  | 'STALE_TIMESTAMP'
  /** Signature token seen before (a replayed request). */
  | 'REPLAYED_TOKEN'
  /** The body can never become a mail (bad JSON, missing fields, broken multipart). */
  | 'INVALID_PAYLOAD'
  /** A content type this provider never sends. */
  | 'UNSUPPORTED_MEDIA_TYPE';

/** Codes answered 401: the caller did not prove it is the provider. */
export const AUTH_ERROR_CODES: ReadonlySet<WebhookErrorCode> = new Set(['UNAUTHORIZED', 'BAD_SIGNATURE', 'STALE_TIMESTAMP', 'REPLAYED_TOKEN']);

export class WebhookError extends SingleshotError {
  declare readonly code: WebhookErrorCode;
  readonly details: unknown;
  constructor(code: WebhookErrorCode, message: string, details?: unknown) {
    super(message, code);
    this.details = details;
  }

  get isAuthError(): boolean {
    return AUTH_ERROR_CODES.has(this.code as WebhookErrorCode);
  }
}
