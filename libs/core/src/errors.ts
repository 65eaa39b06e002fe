/**
 * Marker error classes. Callers classify with `instanceof` or `name`, never by
 * message text. Each carries a string `code` (imapflow style) for logs, metrics
 * and the DLQ record.
 */

export class SingleshotError extends Error {
  readonly code: string;
  constructor(message: string, code: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/**
 * Try again later. `safeToFallback` is true only when the provider certainly did
 * not receive the request (refused before it was written), so another provider
 * may take it without risking a second copy.
 */
export class RetryableError extends SingleshotError {
  readonly retryAfterMs: number | undefined;
  readonly safeToFallback: boolean;
  constructor(
    message: string,
    code: string,
    options: { retryAfterMs?: number; safeToFallback?: boolean; cause?: unknown } = {},
  ) {
    super(message, code, { cause: options.cause });
    this.retryAfterMs = options.retryAfterMs;
    this.safeToFallback = options.safeToFallback ?? false;
  }
}

/** Will never succeed as it is (invalid recipient, auth, invalid payload): DLQ at once. */
export class PermanentError extends SingleshotError {}

/**
 * The provider may have accepted the request (timeout or reset after it was
 * written, or a 2xx without an id). Never resend or fall back before reconciling.
 */
export class InDoubtError extends SingleshotError {}

/** Input that fails validation at a boundary (HTTP body, job payload, config). */
export class ValidationError extends SingleshotError {
  readonly details: unknown;
  constructor(message: string, details?: unknown, code = 'INVALID_INPUT') {
    super(message, code);
    this.details = details;
  }
}

export type ErrorClass = 'retry' | 'permanent' | 'in_doubt';

/** Classifies any thrown value; unknown errors are retryable (never silently permanent). */
export function classifyError(err: unknown): ErrorClass {
  if (err instanceof PermanentError) return 'permanent';
  if (err instanceof InDoubtError) return 'in_doubt';
  return 'retry';
}

/** A short, serializable description of any thrown value for records and logs. */
export function describeError(err: unknown): { name: string; code: string; message: string } {
  if (err instanceof SingleshotError) return { name: err.name, code: err.code, message: err.message };
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return { name: err.name, code: typeof code === 'string' ? code : 'UNKNOWN', message: err.message };
  }
  return { name: 'Error', code: 'UNKNOWN', message: String(err) };
}
