/**
 * Error tables of the native providers (SES, SendGrid, Twilio, Slack), in the
 * style of classify.ts: keyed by the provider's documented error name, code or
 * status, never by message text. The question behind every row is the same:
 * could the provider have the message now?
 *
 * Throttling and 5xx are retryable, an invalid recipient or bad credentials
 * permanent, a lost answer in doubt. Anything the provider answered with an
 * error status is a definite "not taken"; whether it is safe to hand the
 * message to the next provider at once is decided by the chain's budget
 * (`safeToFallback` is reserved for "not a byte left").
 */
import { classifyHttpStatus, type Outcome, type Verdict } from './classify';

// ---------------------------------------------------------------------------
// Amazon SES v2 (`SendEmail`, REST-JSON; the error name is `x-amzn-ErrorType`)

/**
 * SendEmail's documented exceptions (API reference, "Errors") plus the common
 * AWS errors every service can answer. Not listed: the HTTP status decides.
 */
export const SES_ERROR_TABLE: Readonly<Record<string, Outcome>> = {
  // 429: the account's sending rate; back off and retry.
  TooManyRequestsException: 'retry',
  ThrottlingException: 'retry',
  Throttling: 'retry',
  // 400 "too many instances of the resource / quota": the daily quota resets.
  LimitExceededException: 'retry',
  // Sending is paused for the account or configuration set: an operator resumes it.
  SendingPausedException: 'retry',
  // 5xx family.
  InternalServiceErrorException: 'retry',
  InternalFailure: 'retry',
  ServiceUnavailable: 'retry',
  ServiceUnavailableException: 'retry',
  // The message itself: invalid address, content SES refuses, an unverified identity.
  BadRequestException: 'permanent',
  MessageRejected: 'permanent',
  MailFromDomainNotVerifiedException: 'permanent',
  NotFoundException: 'permanent',
  AccountSuspendedException: 'permanent',
  // Credentials and permissions (403): the same request fails the same way.
  UnrecognizedClientException: 'permanent',
  InvalidSignatureException: 'permanent',
  AccessDeniedException: 'permanent',
  InvalidClientTokenId: 'permanent',
  ExpiredTokenException: 'permanent',
  SignatureDoesNotMatch: 'permanent',
  MissingAuthenticationToken: 'permanent',
  // The request expired before SES read it (clock skew or a stalled send): not processed.
  RequestExpired: 'retry',
};

/**
 * A service error (SES answered): its name, then its status. A 2xx the SDK
 * could not read (no MessageId, bad JSON) may be a taken message: in doubt.
 */
export function classifySesError(name: string | undefined, status: number | undefined): Verdict {
  const listed = name ? SES_ERROR_TABLE[name] : undefined;
  if (listed) return { outcome: listed, safeToFallback: false };
  if (status !== undefined && status >= 200 && status <= 299) return { outcome: 'in_doubt', safeToFallback: false };
  if (status !== undefined) return { outcome: classifyHttpStatus(status), safeToFallback: false };
  return { outcome: 'in_doubt', safeToFallback: false };
}

/**
 * Transport failures of an SDK whose HTTP stack does not say whether the
 * request was written. Only failures that can happen before a connection
 * exists prove nothing left; every other one (reset, timeout, abort) is in
 * doubt.
 */
export const PRE_CONNECT_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL']);

export function classifySdkTransport(code: string | undefined): Verdict {
  return code && PRE_CONNECT_CODES.has(code) ? { outcome: 'retry', safeToFallback: true } : { outcome: 'in_doubt', safeToFallback: false };
}

// ---------------------------------------------------------------------------
// SendGrid v3 Mail Send (`POST /v3/mail/send`)

/**
 * Documented answers ("Mail Send" reference, "Errors"): 202 accepted (with
 * `X-Message-Id`), 400 invalid request (bad address, missing field), 401 bad
 * key, 403 key without Mail Send permission or unverified sender, 404, 413
 * payload too large, 429 rate limit (`X-RateLimit-Reset`), 5xx. The class
 * rule of `classifyHttpStatus` gives exactly these; they are listed so the
 * table is the documentation.
 */
export const SENDGRID_STATUS_TABLE: Readonly<Record<number, Outcome>> = {
  400: 'permanent',
  401: 'permanent',
  403: 'permanent',
  404: 'permanent',
  413: 'permanent',
  429: 'retry',
  500: 'retry',
  502: 'retry',
  503: 'retry',
  504: 'retry',
};

export function classifySendgridStatus(status: number): Outcome {
  return SENDGRID_STATUS_TABLE[status] ?? classifyHttpStatus(status);
}

// ---------------------------------------------------------------------------
// Twilio Programmable Messaging (`POST …/Messages.json`; errors carry a numeric `code`)

/**
 * Twilio error codes (twilio.com/docs/api/errors) a Messages create can answer.
 * Not listed: the HTTP status decides (429/5xx retry, other 4xx permanent).
 */
export const TWILIO_ERROR_TABLE: Readonly<Record<number, Outcome>> = {
  // 20003 authentication failed, 20005 account not active, 20404 account/resource not found.
  20003: 'permanent',
  20005: 'permanent',
  20404: 'permanent',
  // 20429 too many requests; 14107 SMS send rate limit exceeded; 20500/20503 Twilio-side errors.
  20429: 'retry',
  14107: 'retry',
  20500: 'retry',
  20503: 'retry',
  // The recipient: 21211 invalid 'To', 21614 not a mobile number, 21610 unsubscribed (STOP),
  // 21612 cannot route to it, 21408 region not enabled, 21265 'To' is a short code,
  // 21608 an unverified number on a trial account.
  21211: 'permanent',
  21608: 'permanent',
  21614: 'permanent',
  21610: 'permanent',
  21612: 'permanent',
  21408: 'permanent',
  21265: 'permanent',
  // The sender or the message: 21606/21659 'From' not usable, 21602 body required, 21617 body too long.
  21606: 'permanent',
  21659: 'permanent',
  21602: 'permanent',
  21617: 'permanent',
  // 30001 queue overflow: Twilio's queue for the sender is full for now.
  30001: 'retry',
};

export function classifyTwilioError(code: number | undefined, status: number): Outcome {
  const listed = code === undefined ? undefined : TWILIO_ERROR_TABLE[code];
  return listed ?? classifyHttpStatus(status);
}

/** Twilio's answer to a free-form WhatsApp message outside the 24-hour customer service window. */
export const TWILIO_OUTSIDE_WINDOW = 63016;

/** Our code for "WhatsApp cannot take this message for this recipient now, a template is needed and none is configured". */
export const WHATSAPP_OUTSIDE_SESSION = 'WHATSAPP_OUTSIDE_SESSION';

/**
 * Codes of a retryable refusal that concerns one recipient, not the
 * provider's health: the circuit breaker counts them as the provider working,
 * so that recipients outside their WhatsApp window cannot open the breaker
 * for the ones inside it.
 */
export const RECIPIENT_REFUSAL_CODES: ReadonlySet<string> = new Set([WHATSAPP_OUTSIDE_SESSION]);

// ---------------------------------------------------------------------------
// Slack Web API `chat.postMessage` (HTTP 200 `{ ok: false, error }`, or 429)

/**
 * `error` strings of chat.postMessage (method reference, "Errors"). Unlisted
 * strings are permanent: Slack's method errors describe the request, and the
 * same request gets the same answer.
 */
export const SLACK_ERROR_TABLE: Readonly<Record<string, Outcome>> = {
  ratelimited: 'retry',
  rate_limited: 'retry',
  service_unavailable: 'retry',
  // "The method was called via a POST request, but the POST data was either missing or truncated."
  request_timeout: 'retry',
  team_added_to_org: 'retry',
  // Documented as "It's possible some aspect of the operation succeeded before the error was raised."
  fatal_error: 'in_doubt',
  internal_error: 'in_doubt',
  // Recipient: the conversation or user cannot take the message.
  channel_not_found: 'permanent',
  not_in_channel: 'permanent',
  is_archived: 'permanent',
  user_not_found: 'permanent',
  cannot_dm_bot: 'permanent',
  restricted_action: 'permanent',
  // Credentials and scopes.
  not_authed: 'permanent',
  invalid_auth: 'permanent',
  account_inactive: 'permanent',
  token_revoked: 'permanent',
  token_expired: 'permanent',
  no_permission: 'permanent',
  missing_scope: 'permanent',
  not_allowed_token_type: 'permanent',
  // The message.
  msg_too_long: 'permanent',
  no_text: 'permanent',
  invalid_blocks: 'permanent',
  invalid_metadata_format: 'permanent',
};

export function classifySlackError(error: string): Outcome {
  return SLACK_ERROR_TABLE[error] ?? 'permanent';
}
