import { SingleshotError } from '@singleshot/core';

/** Why a feedback webhook was refused. */
export type FeedbackErrorCode =
  | 'UNAUTHORIZED'
  | 'BAD_SIGNATURE'
  | 'STALE_TIMESTAMP'
  | 'REPLAYED_TOKEN'
  | 'UNTRUSTED_CERTIFICATE_URL'
  | 'UNTRUSTED_SUBSCRIBE_URL'
  | 'UNKNOWN_TOPIC'
  | 'CERTIFICATE_UNAVAILABLE'
  | 'SUBSCRIPTION_CONFIRM_FAILED'
  | 'INVALID_PAYLOAD';

/** Codes answered 401: the caller did not prove it is the provider. */
const AUTH: ReadonlySet<FeedbackErrorCode> = new Set(['UNAUTHORIZED', 'BAD_SIGNATURE', 'STALE_TIMESTAMP', 'REPLAYED_TOKEN', 'UNTRUSTED_CERTIFICATE_URL', 'UNKNOWN_TOPIC']);

/**
 * A feedback webhook refused before anything was recorded: 401 when the
 * caller is not proven to be the provider, 503 when the signing certificate
 * could not be fetched or a subscription not confirmed (the provider retries), 400 otherwise.
 */
export class FeedbackError extends SingleshotError {
  declare readonly code: FeedbackErrorCode;
  constructor(code: FeedbackErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, code, options);
  }

  get status(): number {
    if (AUTH.has(this.code)) return 401;
    return this.code === 'CERTIFICATE_UNAVAILABLE' || this.code === 'SUBSCRIPTION_CONFIRM_FAILED' ? 503 : 400;
  }
}
