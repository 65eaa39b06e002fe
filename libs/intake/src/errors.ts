import { SingleshotError } from '@singleshot/core';

/**
 * Redis could not confirm the decide job (down, or slower than the enqueue
 * timeout). The caller must answer a retryable status, never a 2xx: the event
 * may or may not be queued, and a retry is deduplicated by its message key.
 * Every path that talks to Redis on ingest's behalf (acceptance, the webhook
 * token check) throws this one class, and callers test it with `instanceof`.
 */
export class StoreUnavailableError extends SingleshotError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'STORE_UNAVAILABLE', options);
  }
}
