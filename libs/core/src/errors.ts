/**
 * Marker error classes. Callers classify with `instanceof` or `name`, never by
 * message text. Each carries a `code` from the catalogue (imapflow style) for
 * logs, metrics and the DLQ record.
 */

import { externalCode, type AnyErrorCode, type ErrorCode } from './error-codes';

export class SingleshotError extends Error {
  readonly code: AnyErrorCode;
  constructor(message: string, code: AnyErrorCode, options?: { cause?: unknown }) {
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
    code: AnyErrorCode,
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
  constructor(message: string, details?: unknown, code: ErrorCode = 'INVALID_INPUT') {
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

/** The code of any thrown value: ours as it is, a foreign string `code` passed through, else undefined. */
export function codeOf(err: unknown): AnyErrorCode | undefined {
  if (err instanceof SingleshotError) return err.code;
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' && code ? externalCode(code) : undefined;
}

/** A short, serializable description of any thrown value for records and logs. */
export function describeError(err: unknown): { name: string; code: AnyErrorCode; message: string } {
  if (err instanceof SingleshotError) return { name: err.name, code: err.code, message: err.message };
  // A foreign error (a socket's, a library's) keeps its own code, marked as passed through.
  if (err instanceof Error) return { name: err.name, code: codeOf(err) ?? 'UNKNOWN', message: err.message };
  return { name: 'Error', code: 'UNKNOWN', message: String(err) };
}
