import type { Response } from 'express';
import { SingleshotError } from '@singleshot/core';

/**
 * Redis could not confirm the decide job (down, or slower than the enqueue
 * timeout). The caller must answer a retryable status, never a 2xx: the event
 * may or may not be queued, and a retry is deduplicated by its message key.
 */
export class StoreUnavailableError extends SingleshotError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'STORE_UNAVAILABLE', options);
  }
}

/** The one error body shape of the ingest API: `{ error: { code, message, details } }`. */
export function sendError(res: Response, status: number, code: string, message: string, details?: unknown): void {
  res.status(status).json({ error: { code, message, ...(details === undefined ? {} : { details }) } });
}
