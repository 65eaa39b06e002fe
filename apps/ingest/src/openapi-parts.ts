import { errorResponse, retryAfterHeader } from '@singleshot/observability';

/** The 202 of every intake endpoint. */
export const accepted = {
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

/** Answers every producer-authenticated intake endpoint shares. */
export const intakeErrors = {
  '401': errorResponse('No valid credentials: an unknown API key or a wrong `X-Singleshot-Signature`, or none where credentials are configured; a `WWW-Authenticate: Bearer` challenge accompanies it'),
  '403': errorResponse('The API key may not post this source (code `SOURCE_NOT_ALLOWED`)'),
  '413': errorResponse('The body exceeds `ingest.maxBodyBytes` (code `BODY_TOO_LARGE`)'),
  '429': errorResponse('The producer is over its rate limit (code `RATE_LIMITED`), or its tenant has `maxPending` jobs waiting (code `TENANT_BACKLOG_FULL`); retry with the same id after `Retry-After`', retryAfterHeader),
  '500': errorResponse('Internal error; nothing was confirmed, retry with the same id'),
  '503': errorResponse('Redis did not confirm the message (code `STORE_UNAVAILABLE`), or ingest is shedding load; retry with the same id', retryAfterHeader),
};

/** The `?mailbox=` query parameter (a path parameter in some webhook forms). */
export const mailboxParameter = { name: 'mailbox', in: 'query', schema: { type: 'string', minLength: 1 }, description: 'The configured mailbox id' };
