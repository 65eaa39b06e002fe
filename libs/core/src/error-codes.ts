/**
 * Every fixed error `code` singleshot produces: in HTTP error answers, thrown
 * `SingleshotError`s, DLQ records and the operation journal. Operators alert
 * and filter on these, so each is a named value here and listed in
 * docs/contract.md (a test keeps the two equal). The value is the meaning.
 *
 * Codes built at run time from a provider's answer are not listed one by one:
 * see {@link ProviderErrorCode}.
 */
export const ERROR_CODES = {
  // HTTP answers (ingest, dashboard, health server)
  BAD_REQUEST: 'the request could not be read (malformed body or parameters)',
  INVALID_JSON: 'the body is not valid JSON',
  INVALID_EVENT: 'the event fails validation (ingest) or the client refused it before sending',
  INVALID_REQUEST: 'a dashboard parameter or a provider request is invalid',
  MISSING_EVENT_ID: 'the event has no stable id and no Idempotency-Key header',
  SOURCE_NOT_ALLOWED: 'the producer key may not post events of this source',
  SEND_AT_BEYOND_HORIZON: 'an event asks to be sent later than scheduling.maxHorizonDays allows',
  AMBIGUOUS_SEND_AT: 'an event gives both sendAt and delaySeconds',
  INVALID_CANCELLATION: 'a cancellation names no target, or more than one',
  CANCEL_NOT_ALLOWED: 'the producer key may not cancel this target',
  TENANT_NOT_ALLOWED: 'a key bound to a tenant asked for what all tenants share (preferences, suppressions, the queues): an operator\'s',
  RECIPIENT_SUPPRESSED: 'the recipient became suppressed or opted out while an earlier attempt was in flight: nothing more is sent',
  UNAUTHORIZED: 'credentials missing or wrong (bearer key, basic auth, dashboard login, webhook secret)',
  BAD_SIGNATURE: 'a request or webhook signature is missing or does not match',
  STALE_TIMESTAMP: 'a signed webhook timestamp is outside the accepted window',
  REPLAYED_TOKEN: 'a webhook signature token was already used',
  CROSS_ORIGIN: 'a state-changing dashboard request did not come from the dashboard',
  RATE_LIMITED: 'the producer is over its intake rate limit (429, retry later)',
  TENANT_BACKLOG_FULL: 'the tenant has its `maxPending` deliver jobs waiting (429, retry later)',
  OVERLOADED: 'too many requests in flight (503, retry later)',
  BODY_TOO_LARGE: 'the body exceeds the configured limit',
  UNSUPPORTED_MEDIA_TYPE: 'a webhook body has the wrong content type',
  INVALID_PAYLOAD: 'a webhook body or a provider payload cannot be read or built',
  NOT_FOUND: 'no such route, document, operation or message',
  NOT_REPLAYABLE: 'a replay was asked for an operation that is not dead or suppressed (409)',
  METHOD_NOT_ALLOWED: 'the health server does not take this method',
  INTERNAL: 'unexpected server error; the request was not confirmed, retry',
  STORE_UNAVAILABLE: 'Redis (or the document store) did not confirm the write; retry later',
  METRICS_FAILED: 'the metrics endpoint could not collect its samples',
  // Inbound mail
  MISSING_MAILBOX: 'an inbound mail post names no mailbox',
  UNKNOWN_MAILBOX: 'an inbound mail post names a mailbox that is not configured',
  UNKNOWN_CHANNEL: 'a suppression names a channel that is not configured (it would stop nothing)',
  EMPTY_MAIL: 'a raw mail post has an empty body',
  INVALID_MAIL: 'an inbound mail cannot be parsed as a message',
  UNKNOWN_PROVIDER: 'no inbound webhook format of that name',
  PROVIDER_NOT_CONFIGURED: 'the inbound webhook format is not configured',
  MAIL_PARSE_TIMEOUT: 'parsing a MIME message took too long',
  MAIL_PARSE_FAILED: 'a MIME message could not be parsed',
  STOPPED: 'the IMAP source was stopped while connecting',
  // Delivery feedback
  UNTRUSTED_CERTIFICATE_URL: 'an SNS message names a signing certificate that is not on an https SNS host',
  UNTRUSTED_SUBSCRIBE_URL: 'an SNS subscription confirmation names a SubscribeURL that is not on an https SNS host',
  UNKNOWN_TOPIC: 'a verified SNS message comes from a topic not in feedback.ses.topicArns',
  CERTIFICATE_UNAVAILABLE: 'the SNS signing certificate could not be fetched (503, SNS retries)',
  SUBSCRIPTION_CONFIRM_FAILED: 'the GET on an SNS SubscribeURL failed (503, SNS retries)',
  // Documents
  BAD_LINK: 'a document link signature is missing or invalid',
  LINK_EXPIRED: 'a document link has expired',
  BAD_UNSUBSCRIBE_TOKEN: 'an unsubscribe link token is malformed or its signature is invalid',
  UNSUBSCRIBE_EXPIRED: 'an unsubscribe link has expired',
  INVALID_PREFERENCES: 'a preferences body or recipient fails validation',
  DOCUMENT_FAILED: 'a document the message needs could not be generated',
  DOCUMENT_MISSING: 'a stored document is missing from the document store',
  DOCUMENT_STORE: 'the document store failed',
  NO_DOCUMENT_STORE: 'a document is needed but this process has no document store wired',
  TEMPLATE_MISSING: 'the route has no document template of that name (config changed?)',
  TEMPLATE_INVALID: 'a template cannot be compiled',
  RENDER_FAILED: 'rendering a document failed',
  // Delivery and decision
  DIGEST_ROUTE_MISSING: 'a digest names a route that is no longer in the config',
  INVALID_JOB: 'a queue job fails validation (poison): recorded at once, never retried',
  INVALID_RECIPIENT: 'the recipient can never be taken by its channel (checked at fan-out)',
  NO_PROVIDER: 'no provider is configured for the channel',
  BREAKER_OPEN: 'the provider circuit breaker is open; skipped without a call',
  RATE_LIMIT: 'a recipient or channel send limit is reached; the operation is suppressed',
  NO_LOOKUP: 'an in-doubt send cannot be checked: the provider has no lookup and inDoubtPolicy is "dead"',
  NOT_FOUND_ON_LOOKUP: 'the provider lookup says it does not have the message (journal step)',
  // Providers (fixed codes)
  NO_PROVIDER_ID: 'the provider accepted without an id: in doubt',
  PROVIDER_CLOSED: 'the provider is closed (shutting down); safe to fall back',
  INVALID_PROVIDER_CONFIG: 'a provider configuration is invalid',
  AWS_CONFIG_UNAVAILABLE: 'SES has no region or credentials',
  LOOKUP_NO_TARGET: 'a provider lookup needs the recipient',
  LOOKUP_NO_CHANNEL: 'a Slack lookup could not open the conversation',
  LOOKUP_NO_CURSOR: 'a Slack lookup page said "more" without a cursor',
  LOOKUP_TOO_MUCH_HISTORY: 'a Slack lookup found too much history to decide',
  LOOKUP_NO_ID: 'a provider lookup answered 200 without an id',
  LOOKUP_AMBIGUOUS: 'a WhatsApp lookup found other messages to the recipient and cannot recognise the copy: no verdict',
  LOOKUP_UNREADABLE: 'a provider lookup listed a message it could not read: no verdict',
  WHATSAPP_OUTSIDE_SESSION: 'a WhatsApp free-form message is outside the 24-hour session window and the route has no template; safe to fall back',
  DEADLINE: 'a provider call had no answer within its deadline',
  ABORTED: 'a call was aborted by the caller (shutdown or lease lost)',
  UNKNOWN: 'an error without a code',
  // Client library
  INVALID_BODY: 'a signed delivery body is not the expected JSON',
  MISSING_IDEMPOTENCY_KEY: 'a delivery has no Idempotency-Key header',
  KEY_MISMATCH: 'the Idempotency-Key header does not match the body operationKey',
  NETWORK_ERROR: 'the client could not reach ingest',
  ATTEMPT_TIMEOUT: 'a client attempt timed out',
  DEADLINE_EXCEEDED: 'the client send deadline passed',
  // Start-up and infrastructure
  INVALID_CONFIG: 'the config file or environment is invalid',
  INVALID_INPUT: 'input fails validation at a boundary',
  LOG_FORMAT_INVALID: 'the log format setting is invalid',
  INGEST_AUTH_REQUIRED: 'ingest refuses to listen beyond loopback without producer credentials',
  DASHBOARD_AUTH_REQUIRED: 'the dashboard refuses to listen beyond loopback without credentials',
  NO_REDIS: 'no Redis is configured and no redis-server could be started',
  SCRIPT_KEYS_MISMATCH: 'a Lua script was given the wrong number of keys (a bug)',
  SCRIPT_ITEM_FAILED: 'a Redis command failed inside a script for one of the operations it was given (a key of the wrong type); the others were acted on',
  LAYOUT_UNKNOWN: 'Redis holds a layout version this process does not know (written by a newer version): it refuses to start',
  UPGRADE_REQUIRED: 'a script found its shard stamped with a newer layout and did nothing: the job is put back and the process stops taking work',
  LAYOUT_TOO_OLD: 'Redis holds an older layout version this process has no migration from: it refuses to start',
  REPLICA_WAIT_TIMEOUT: 'too few replicas acknowledged a write in time',
  HANDOFF_ABORTED: 'the relay is stopping; the message stays unacknowledged at its origin',
  INVALID_OUTBOX_EVENT: 'an outbox event is invalid',
  INVALID_OUTBOX_TABLE: 'an outbox table name is not a plain lower-case name',
  LOADTEST_REDIS_START: 'the load test could not start redis-server',
  LOADTEST_FLEET_START: 'the load test fleet did not start',
} as const;

/** A fixed error code (see {@link ERROR_CODES}). */
export type ErrorCode = keyof typeof ERROR_CODES;

declare const external: unique symbol;

/**
 * A code singleshot did not choose and passes through as it came: a transport
 * error (`ECONNRESET`), an SES error name, a Slack error in upper case, or the
 * `code` of a foreign thrown value. Built only by {@link externalCode}, so a
 * code literal written in our own code cannot hide behind it.
 */
export type ExternalCode = string & { readonly [external]: true };

/** Marks a code that came from outside as passed through (see {@link ExternalCode}). */
export function externalCode(raw: string): ExternalCode {
  return raw as ExternalCode;
}

/**
 * Codes built at run time, by family: the HTTP status of an answer
 * (`HTTP_503`), an SMTP reply (`SMTP_550`), a Twilio error number
 * (`TWILIO_21610`), a lookup's failure (`LOOKUP_` + the code of what failed,
 * `LOOKUP_HTTP_500`), a failed WhatsApp session check
 * (`WHATSAPP_SESSION_CHECK_` + the lookup's code), a Slack API error in upper
 * case (`SLACK_CHANNEL_NOT_FOUND`), and external codes.
 */
export type ProviderErrorCode =
  | `HTTP_${number | 'UNKNOWN'}`
  | `SMTP_${number}`
  | `TWILIO_${number}`
  | `LOOKUP_${string}`
  | `WHATSAPP_SESSION_CHECK_${string}`
  | `SLACK_${string}`
  | ExternalCode;

/** Every code a singleshot error, answer or record may carry: a fixed one or one of a family. */
export type AnyErrorCode = ErrorCode | ProviderErrorCode;

/** The prefixes of {@link ProviderErrorCode}'s families, for checks of code read back as text. */
export const ERROR_CODE_FAMILIES = ['HTTP_', 'SMTP_', 'TWILIO_', 'LOOKUP_', 'WHATSAPP_SESSION_CHECK_', 'SLACK_'] as const;
