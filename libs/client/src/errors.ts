/**
 * Every error the client throws is a `SingleshotClientError` with a string
 * `code`; branch on `code` (or the subclass), never on the message.
 */
export class SingleshotClientError extends Error {
  readonly code: string;
  constructor(message: string, code: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** The event cannot be sent as it is (checked before any request): code `INVALID_EVENT`. */
export class InvalidEventError extends SingleshotClientError {
  constructor(message: string) {
    super(message, 'INVALID_EVENT');
  }
}

/**
 * Ingest refused the event for good (400 invalid input, 401 bad credentials,
 * 403 source not allowed for the key, 413 too large): retrying the same
 * request gets the same answer. `code` is the server's `error.code` when it
 * sent one (e.g. `INVALID_EVENT`, `UNAUTHORIZED`), else `HTTP_<status>`.
 */
export class SendRejectedError extends SingleshotClientError {
  readonly status: number;
  readonly details: unknown;
  constructor(message: string, code: string, status: number, details: unknown) {
    super(message, code);
    this.status = status;
    this.details = details;
  }
}

/**
 * The deadline passed (or the next wait would pass it) while ingest kept
 * answering 503/429/5xx or could not be reached: code `DEADLINE_EXCEEDED`.
 * The event may or may not have been kept; sending it again with the same id
 * is always safe.
 */
export class SendDeadlineError extends SingleshotClientError {
  readonly attempts: number;
  /** What the last attempt ended with (`HTTP_503`, `ECONNREFUSED`, `ATTEMPT_TIMEOUT`, …). */
  readonly lastCode: string;
  constructor(message: string, attempts: number, lastCode: string, cause?: unknown) {
    super(message, 'DEADLINE_EXCEEDED', { cause });
    this.attempts = attempts;
    this.lastCode = lastCode;
  }
}

/** The caller's signal aborted the send: code `ABORTED`. Same caveat as the deadline. */
export class SendAbortedError extends SingleshotClientError {
  constructor(cause?: unknown) {
    super('send aborted by the caller', 'ABORTED', { cause });
  }
}

/** A delivery to an `http` provider receiver failed the checks of `verifyDelivery`. */
export class DeliveryVerificationError extends SingleshotClientError {
  /** The HTTP status a receiver should answer with (400 for every check). */
  readonly status = 400;
}
