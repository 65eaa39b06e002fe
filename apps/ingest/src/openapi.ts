import { errorResponse, errorSchema, probePaths, retryAfterHeader } from '@singleshot/observability';

const accepted = {
  description: 'Durably queued (`accepted`), or already known by its id (`duplicate`). Never sent for a message not kept.',
  content: {
    'application/json': {
      schema: {
        type: 'object',
        required: ['messageKey', 'status'],
        properties: { messageKey: { type: 'string', pattern: '^[0-9a-f]{64}$' }, status: { enum: ['accepted', 'duplicate'] } },
      },
    },
  },
};

/** Answers every intake endpoint shares. */
const intakeErrors = {
  '401': errorResponse('No valid credentials: an unknown API key or a wrong `X-Singleshot-Signature`, or none where credentials are configured; a `WWW-Authenticate: Bearer` challenge accompanies it'),
  '403': errorResponse('The API key may not post this source (code `SOURCE_NOT_ALLOWED`)'),
  '413': errorResponse('The body exceeds `ingest.maxBodyBytes` (code `BODY_TOO_LARGE`)'),
  '429': errorResponse('The producer is over its rate limit (code `RATE_LIMITED`); retry with the same id after `Retry-After`', retryAfterHeader),
  '500': errorResponse('Internal error; nothing was confirmed, retry with the same id'),
  '503': errorResponse('Redis did not confirm the message (code `STORE_UNAVAILABLE`), or ingest is shedding load; retry with the same id', retryAfterHeader),
};

const mailbox = { name: 'mailbox', in: 'query', schema: { type: 'string', minLength: 1 }, description: 'The configured mailbox id' };
const provider = { name: 'provider', in: 'path', required: true, schema: { enum: ['mailgun', 'postmark', 'sendgrid'] } };
const webhookBody = {
  required: true,
  content: {
    'multipart/form-data': { schema: { type: 'object' } },
    'application/x-www-form-urlencoded': { schema: { type: 'object' } },
    'application/json': { schema: { type: 'object' } },
  },
};
/** The vendor's own inbound format; refusals use the status the vendor stops retrying on (Mailgun 406, Postmark 403, SendGrid 400). */
const webhookResponses = {
  '202': accepted,
  '400': errorResponse('SendGrid: the mail cannot be taken'),
  '401': errorResponse('The vendor signature, token or basic auth did not verify'),
  '403': errorResponse('Postmark: the mail cannot be taken'),
  '404': errorResponse('Unknown inbound format, or this vendor is not configured (`webhooks.<vendor>`)'),
  '406': errorResponse('Mailgun: the mail cannot be taken (replayed token, unknown mailbox, invalid mail)'),
  '413': intakeErrors['413'],
  '500': intakeErrors['500'],
  '503': errorResponse('Redis did not confirm the mail; the vendor retries', retryAfterHeader),
};

/**
 * The ingest HTTP API as OpenAPI 3.1, served at `GET /openapi.json`. Kept by
 * hand next to the routes; test/e2e/openapi.test.ts validates live answers
 * of every endpoint against it, so a drift fails the suite.
 */
export const INGEST_OPENAPI = {
  openapi: '3.1.0',
  info: {
    title: 'singleshot ingest API',
    version: '1',
    description: 'Producers post business events and mail; each message makes at most one notification per recipient and channel.',
  },
  components: {
    schemas: {
      Error: errorSchema,
      Event: {
        type: 'object',
        required: ['source', 'type'],
        properties: {
          id: { type: 'string', minLength: 1, maxLength: 512, description: 'The producer\'s stable event id (or the `Idempotency-Key` header). Required, from one or the other.' },
          source: { type: 'string', minLength: 1, maxLength: 200, not: { const: 'mail' } },
          type: { type: 'string', minLength: 1, maxLength: 200 },
          recipients: { type: 'array', maxItems: 1000, items: { type: 'string', minLength: 1, maxLength: 512 } },
          data: { type: 'object' },
        },
      },
    },
    securitySchemes: {
      apiKey: { type: 'http', scheme: 'bearer', description: '`Authorization: Bearer <key>` (config `ingest.apiKeys`, each key limited to its `sources`).' },
      signature: { type: 'apiKey', in: 'header', name: 'X-Singleshot-Signature', description: '`sha256=<hex HMAC-SHA256 of the raw body>` with one of `ingest.signingSecrets`.' },
    },
  },
  // Either credential; with neither configured, ingest listens on loopback only and takes anonymous posts.
  security: [{ apiKey: [] }, { signature: [] }, {}],
  paths: {
    '/v1/events': {
      post: {
        tags: ['intake'],
        summary: 'Post a business event',
        parameters: [{ name: 'Idempotency-Key', in: 'header', schema: { type: 'string', minLength: 1 }, description: 'Takes the place of the body `id` when present.' }],
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Event' } } } },
        responses: {
          '202': accepted,
          '400': errorResponse('Invalid input: `INVALID_JSON`, `INVALID_EVENT` (details list the problems), `MISSING_EVENT_ID`'),
          ...intakeErrors,
        },
      },
    },
    '/v1/mail/inbound': {
      post: {
        tags: ['intake'],
        summary: 'Post one email as raw MIME',
        parameters: [{ ...mailbox, required: true }],
        requestBody: { required: true, content: { 'message/rfc822': { schema: { type: 'string', contentMediaType: 'message/rfc822' } } } },
        responses: {
          '202': accepted,
          '400': errorResponse('`MISSING_MAILBOX`, `EMPTY_MAIL`, or mail that cannot be parsed'),
          '404': errorResponse('`UNKNOWN_MAILBOX`: no such mailbox configured'),
          ...intakeErrors,
        },
      },
    },
    '/v1/mail/inbound/{provider}': {
      post: { tags: ['intake'], summary: 'A vendor\'s inbound webhook (mailbox in `?mailbox=`)', security: [{}], parameters: [provider, mailbox], requestBody: webhookBody, responses: webhookResponses },
    },
    '/v1/mail/inbound/{provider}/{mailbox}': {
      post: {
        tags: ['intake'],
        summary: 'A vendor\'s inbound webhook (mailbox in the path)',
        security: [{}],
        parameters: [provider, { ...mailbox, in: 'path', required: true }],
        requestBody: webhookBody,
        responses: webhookResponses,
      },
    },
    '/v1/mail/inbound/mailgun/{mailbox}/mime': {
      post: {
        tags: ['intake'],
        summary: 'Mailgun\'s "store and notify" MIME format',
        security: [{}],
        parameters: [{ ...mailbox, in: 'path', required: true }],
        requestBody: webhookBody,
        responses: webhookResponses,
      },
    },
    ...probePaths,
  },
} as const;
