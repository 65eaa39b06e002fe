/**
 * How a provider outcome maps onto the three error classes of @singleshot/core.
 * Tables keyed by status, reply code or error `code` (graphile-worker style);
 * never by message text, which changes between library versions and locales.
 *
 * The question behind every row: could the provider have the message now?
 *  - certainly not, and it will not take it as it is  → PermanentError (DLQ at once)
 *  - certainly not, try again later                  → RetryableError
 *      with `safeToFallback` only when not a byte of the request reached the peer
 *  - maybe                                           → InDoubtError (reconcile first)
 */
import { InDoubtError, PermanentError, RetryableError, SingleshotError, externalCode, type AnyErrorCode } from '@singleshot/core';

export type Outcome = 'retry' | 'permanent' | 'in_doubt';

export interface Verdict {
  outcome: Outcome;
  /** Only meaningful for `retry`: the request certainly never reached the provider. */
  safeToFallback: boolean;
}

/** Builds the error class a verdict stands for. */
export function errorFor(
  verdict: Verdict,
  message: string,
  code: AnyErrorCode,
  options: { retryAfterMs?: number; cause?: unknown } = {},
): SingleshotError {
  switch (verdict.outcome) {
    case 'permanent':
      return new PermanentError(message, code, { cause: options.cause });
    case 'in_doubt':
      return new InDoubtError(message, code, { cause: options.cause });
    case 'retry':
      return new RetryableError(message, code, {
        retryAfterMs: options.retryAfterMs,
        safeToFallback: verdict.safeToFallback,
        cause: options.cause,
      });
  }
}

/**
 * The `code` of any thrown value: ours as it is, a foreign one passed through
 * (`originalCode` first: nodemailer wraps ECONNREFUSED in ESOCKET).
 */
export function errorCode(err: unknown): AnyErrorCode | undefined {
  if (err instanceof SingleshotError) return err.code;
  if (typeof err !== 'object' || err === null) return undefined;
  const { code, originalCode } = err as { code?: unknown; originalCode?: unknown };
  if (typeof originalCode === 'string' && originalCode) return externalCode(originalCode);
  return typeof code === 'string' && code ? externalCode(code) : undefined;
}

// ---------------------------------------------------------------------------
// HTTP: status codes

/**
 * Statuses whose meaning differs from their class default
 * (2xx: caller checks the id; 3xx: in doubt; 4xx: permanent; 5xx: retry).
 */
export const HTTP_STATUS_TABLE: Readonly<Record<number, Outcome>> = {
  // We never follow redirects (a redirected POST could land at another provider).
  // These say "ask elsewhere" and imply nothing was processed: the URL is wrong.
  300: 'permanent',
  301: 'permanent',
  302: 'permanent',
  307: 'permanent',
  308: 'permanent',
  // 303 See Other is how some APIs answer a processed POST: the message may exist.
  303: 'in_doubt',
  // The server gave up reading our request before it was complete: not processed.
  408: 'retry',
  // Idempotency-Key drafts (and Stripe) answer 409 while a request with the same
  // key is still being processed: the first attempt decides, ask again later.
  409: 'retry',
  // Locked (RFC 4918): the target resource is locked for now, not refused for good.
  423: 'retry',
  // Too Early (RFC 8470): replay later.
  425: 'retry',
  429: 'retry',
};

/**
 * Outcome of a non-2xx final status. Other 4xx (410, 413, 415, …) are permanent:
 * the same request would get the same answer, and retrying them only delays the DLQ.
 */
export function classifyHttpStatus(status: number): Outcome {
  const listed = HTTP_STATUS_TABLE[status];
  if (listed) return listed;
  if (status >= 500 && status <= 599) return 'retry';
  if (status >= 400 && status <= 499) return 'permanent';
  // 3xx not listed, or anything outside the known classes: the peer may have acted on it.
  return 'in_doubt';
}

// ---------------------------------------------------------------------------
// HTTP: transport errors (undici and Node system errors)

/**
 * Where an error code comes from. `connect`: while opening the connection
 * (DNS, TCP, TLS); `exchange`: on a connection carrying the request;
 * `invalid`: undici refused to build the request at all.
 */
export type HttpErrorPhase = 'connect' | 'exchange' | 'invalid';

export const HTTP_ERROR_TABLE: Readonly<Record<string, HttpErrorPhase>> = {
  ECONNREFUSED: 'connect',
  ENOTFOUND: 'connect',
  EAI_AGAIN: 'connect',
  EAI_FAIL: 'connect',
  EHOSTUNREACH: 'connect',
  ENETUNREACH: 'connect',
  EHOSTDOWN: 'connect',
  ENETDOWN: 'connect',
  EADDRNOTAVAIL: 'connect',
  UND_ERR_CONNECT_TIMEOUT: 'connect',
  ERR_TLS_CERT_ALTNAME_INVALID: 'connect',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'connect',
  SELF_SIGNED_CERT_IN_CHAIN: 'connect',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'connect',
  CERT_HAS_EXPIRED: 'connect',
  UND_ERR_SOCKET: 'exchange',
  ECONNRESET: 'exchange',
  EPIPE: 'exchange',
  ETIMEDOUT: 'exchange',
  UND_ERR_HEADERS_TIMEOUT: 'exchange',
  UND_ERR_BODY_TIMEOUT: 'exchange',
  UND_ERR_ABORTED: 'exchange',
  UND_ERR_ABORT: 'exchange',
  ABORT_ERR: 'exchange',
  UND_ERR_CLOSED: 'exchange',
  UND_ERR_DESTROYED: 'exchange',
  UND_ERR_INFO: 'exchange',
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: 'exchange',
  UND_ERR_HEADERS_OVERFLOW: 'exchange',
  DEADLINE: 'exchange',
  ABORTED: 'exchange',
  ECONNABORTED: 'exchange',
  UND_ERR_RESPONSE_EXCEEDED_MAX_SIZE: 'exchange',
  EPROTO: 'connect',
  ERR_SSL_WRONG_VERSION_NUMBER: 'connect',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'connect',
  CERT_NOT_YET_VALID: 'connect',
  ERR_TLS_HANDSHAKE_TIMEOUT: 'connect',
  UND_ERR_INVALID_ARG: 'invalid',
  UND_ERR_REQ_CONTENT_LENGTH_MISMATCH: 'invalid',
  ERR_INVALID_HTTP_TOKEN: 'invalid',
  ERR_INVALID_CHAR: 'invalid',
  // Node's permission model (--permission without --allow-net): no request can ever leave.
  ERR_ACCESS_DENIED: 'invalid',
  UND_ERR_NOT_SUPPORTED: 'invalid',
  ERR_INVALID_URL: 'invalid',
  ERR_INVALID_ARG_TYPE: 'invalid',
};

/**
 * The rule for "was the request written?": undici calls a dispatch handler's
 * `onRequestStart` on a connected socket immediately before it writes the
 * request line, in the same tick, and nowhere else (client-h1 `writeH1`). So
 * `requestStarted === false` proves no byte left: the error is retryable and
 * safe to hand to another provider, whatever its code. Once started, every
 * failure is in doubt, even a `connect` code: an established socket can report
 * EHOSTUNREACH when a route dies mid-request, and an idle keep-alive socket the
 * server closed surfaces as UND_ERR_SOCKET/ECONNRESET after our write. The
 * table tells which step failed (for the code and message) and which requests
 * undici refused to build (permanent: they can never be sent as they are).
 */
export function classifyHttpError(code: string, requestStarted: boolean): Verdict {
  if (requestStarted) return { outcome: 'in_doubt', safeToFallback: false };
  if (HTTP_ERROR_TABLE[code] === 'invalid') return { outcome: 'permanent', safeToFallback: false };
  return { outcome: 'retry', safeToFallback: true };
}

// ---------------------------------------------------------------------------
// SMTP

/**
 * How far an SMTP call got. `connect`: TCP, TLS, greeting, EHLO, AUTH;
 * `envelope`: MAIL FROM, RCPT TO, DATA command; `data`: the message content
 * has started to stream. Without content a server cannot deliver anything.
 */
export type SmtpPhase = 'connect' | 'envelope' | 'data';

/**
 * Reply codes that differ from RFC 5321's class rule (4yz transient, 5yz permanent).
 */
export const SMTP_REPLY_TABLE: Readonly<Record<number, 'retry' | 'permanent'>> = {
  // Service closing: the server is going away, not refusing this message.
  421: 'retry',
  // Bad sequence of commands: a session-state problem, a new connection sends it fine.
  503: 'retry',
  // Exceeded storage allocation. RFC 5321 4.5.3.1.10 tells clients to treat 552 on
  // RCPT as temporary, and a full mailbox is usually emptied within a day: retry,
  // bounded by the attempt budget.
  552: 'retry',
  // Transaction failed: in practice policy/spam/blocklist rejections of this very
  // message. Retrying repeats the rejection (and hurts reputation): permanent.
  554: 'permanent',
  // Everything else follows the class rule on purpose: 450/451/452 carry
  // greylisting, rate limits and full queues (retry); 530/534/535/538 are
  // authentication and TLS configuration, 550/551/553 the recipient, 521/556
  // a domain that takes no mail (permanent).
};

/** nodemailer `code` values (and system codes) when the server gave no reply code. */
export type SmtpErrorKind = 'transport' | 'permanent' | 'retry';

export const SMTP_ERROR_TABLE: Readonly<Record<string, SmtpErrorKind>> = {
  // The connection failed or was lost, or the call was cut short: the phase decides.
  ECONNECTION: 'transport',
  ETIMEDOUT: 'transport',
  ESOCKET: 'transport',
  EDNS: 'transport',
  ETLS: 'transport',
  EPROXY: 'transport',
  EPROTOCOL: 'transport',
  ESTREAM: 'transport',
  EABORT: 'transport',
  ECONNREFUSED: 'transport',
  ECONNRESET: 'transport',
  EPIPE: 'transport',
  ENOTFOUND: 'transport',
  EHOSTUNREACH: 'transport',
  ENETUNREACH: 'transport',
  DEADLINE: 'transport',
  ABORTED: 'transport',
  // Credentials or configuration: the same message would fail the same way.
  EAUTH: 'permanent',
  ENOAUTH: 'permanent',
  EOAUTH2: 'permanent',
  ECONFIG: 'permanent',
  EREQUIRETLS: 'permanent',
  // Without a reply code these are client-side checks: bad address syntax, message too large.
  EENVELOPE: 'permanent',
  EMESSAGE: 'permanent',
  EMAXRECIPIENTS: 'permanent',
  EOTP: 'permanent',
  EFILEACCESS: 'permanent',
  EURLACCESS: 'permanent',
  // Node's permission model denied the socket: no message can ever leave this process.
  ERR_ACCESS_DENIED: 'permanent',
  // Pool limits: a later attempt gets a fresh connection.
  EMAXLIMIT: 'retry',
  // An attachment URL could not be fetched: nothing reached the SMTP server yet.
  EFETCH: 'retry',
};

/**
 * Reply code first (`err.responseCode`), then the code table, then the phase.
 * A reply is the server's definite word, whatever the phase: 4yz/5yz after the
 * final dot means it did not take the message (RFC 5321 4.2.5). Such a retry is
 * still not marked safe to fall back once content was sent, to stay on the side
 * of servers that misreport. A lost connection or timeout with no reply is in
 * doubt once content started to stream (the final dot may have arrived and the
 * 250 been lost), and safe before: no content, no message. Unknown codes follow
 * the phase too, never permanent.
 */
export function classifySmtpError(
  err: { code?: string; originalCode?: string; responseCode?: number },
  phase: SmtpPhase,
): Verdict {
  const safe = phase !== 'data';
  const reply = err.responseCode;
  if (typeof reply === 'number' && reply >= 400 && reply <= 599) {
    const outcome = SMTP_REPLY_TABLE[reply] ?? (reply >= 500 ? 'permanent' : 'retry');
    return { outcome, safeToFallback: outcome === 'retry' && safe };
  }
  // nodemailer's own code names the failing step; the system code it wrapped is the fallback.
  const kind = SMTP_ERROR_TABLE[err.code ?? ''] ?? SMTP_ERROR_TABLE[err.originalCode ?? ''] ?? 'transport';
  if (kind === 'permanent') return { outcome: 'permanent', safeToFallback: false };
  if (kind === 'retry') return { outcome: 'retry', safeToFallback: safe };
  return safe ? { outcome: 'retry', safeToFallback: true } : { outcome: 'in_doubt', safeToFallback: false };
}

// ---------------------------------------------------------------------------
// Log file

/**
 * `open` failures (nothing written) versus failures that can leave part of a
 * line behind (ENOSPC, EIO, …: anything not listed is treated that way).
 */
export const LOG_ERROR_TABLE: Readonly<Record<string, 'not_written'>> = {
  EACCES: 'not_written',
  EPERM: 'not_written',
  EISDIR: 'not_written',
  ENOTDIR: 'not_written',
  ENOENT: 'not_written',
  EROFS: 'not_written',
  ENAMETOOLONG: 'not_written',
  ELOOP: 'not_written',
  EMFILE: 'not_written',
  ENFILE: 'not_written',
};

/** A file that could not be opened is retryable and safe to fall back; a failed write is in doubt. */
export function classifyLogError(code: string): Verdict {
  return LOG_ERROR_TABLE[code]
    ? { outcome: 'retry', safeToFallback: true }
    : { outcome: 'in_doubt', safeToFallback: false };
}
