import { OPERATION_STATUSES } from '@singleshot/core';
import { CANCEL_OUTCOMES } from '@singleshot/store';
import { errorResponse, errorSchema, probePaths } from '@singleshot/observability';
import { SUPPRESSION_PATHS, SUPPRESSION_SCHEMAS } from './openapi-suppressions';

const hexKey = { type: 'string', pattern: '^[0-9a-f]{64}$' };
const keyParam = { name: 'key', in: 'path', required: true, schema: hexKey };
const json = (schema: unknown, description: string) => ({ description, content: { 'application/json': { schema } } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** Answers every admin endpoint can give. */
const common = {
  '400': errorResponse('Invalid path or query (code `INVALID_REQUEST`; details list the problems)'),
  '401': errorResponse('No valid credentials (code `UNAUTHORIZED`); a `WWW-Authenticate` challenge accompanies it'),
  '403': errorResponse('The credentials are valid but may not use this endpoint'),
  '500': errorResponse('Internal error'),
};

const statuses = [...OPERATION_STATUSES];
const cancelOutcomes = [...CANCEL_OUTCOMES];

/**
 * The dashboard's admin JSON API (mounted at `/admin/api`) as OpenAPI 3.1,
 * served at `GET /openapi.json` on the dashboard. test/e2e/openapi.test.ts
 * validates live answers against it.
 */
export const ADMIN_OPENAPI = {
  openapi: '3.1.0',
  info: { title: 'singleshot admin API', version: '1', description: 'What happened to a notification, the dead-letter queue and its replay, the journal, the sources, scheduled operations and open digests, the suppression list.' },
  components: {
    schemas: {
      Error: errorSchema,
      Operation: {
        type: 'object',
        required: ['operationKey', 'status', 'attempts', 'journalIds'],
        properties: {
          operationKey: hexKey,
          status: { enum: statuses },
          fence: { type: 'string' },
          attempts: { type: 'integer', minimum: 0 },
          messageKey: { type: 'string' },
          recipient: { type: 'string' },
          channel: { type: 'string' },
          provider: { type: 'string' },
          externalId: { type: 'string' },
          reason: { type: 'string' },
          lastErrorCode: { type: 'string' },
          lastError: { type: 'string' },
          replays: { type: 'integer', minimum: 0 },
          scheduledFor: { type: 'number', description: 'A scheduled operation: when it is due (epoch ms)' },
          scheduleReason: { enum: ['send_at', 'delay'] },
          cancelRequested: { type: 'number', description: 'A cancel came during an attempt (epoch ms): it ends sent or cancelled, never sent anew' },
          cancelReason: { type: 'string' },
          cancelledBy: { type: 'string' },
          waitingReason: { type: 'string', description: '`breaker_open`, `quiet_hours`: waiting unclaimed, not an attempt' },
          waitingUntil: { type: 'number' },
          journalIds: { type: 'array', items: { type: 'string' } },
        },
      },
      Attempt: {
        type: 'object',
        required: ['at', 'attempt', 'outcome'],
        properties: { at: { type: 'number' }, attempt: { type: 'integer' }, outcome: { type: 'string' }, step: { type: 'string' }, provider: { type: 'string' }, errorCode: { type: 'string' } },
      },
      JournalEntry: {
        type: 'object',
        required: ['id', 'shard', 'type', 'ts', 'fields'],
        properties: { id: { type: 'string' }, shard: { type: 'integer' }, type: { type: 'string' }, ts: { type: 'number' }, fields: { type: 'object', additionalProperties: { type: 'string' } } },
      },
      Message: {
        type: 'object',
        required: ['messageKey', 'arrivals', 'via', 'operations'],
        properties: { messageKey: hexKey, arrivals: { type: 'integer', minimum: 1 }, via: { type: 'object', additionalProperties: { type: 'integer' } }, operations: { type: 'array', items: hexKey } },
      },
      ...SUPPRESSION_SCHEMAS,
    },
    securitySchemes: {
      basic: { type: 'http', scheme: 'basic', description: '`dashboard.auth.username` / `password`' },
      bearer: { type: 'http', scheme: 'bearer', description: '`dashboard.auth.token`' },
    },
  },
  security: [{ basic: [] }, { bearer: [] }],
  paths: {
    '/admin/api/operations/{key}': {
      get: {
        tags: ['lookup'],
        summary: 'An operation with its attempts, journal entries and DLQ record',
        parameters: [keyParam],
        responses: {
          '200': json(
            {
              type: 'object',
              required: ['operation', 'history', 'journal', 'dead'],
              properties: { operation: ref('Operation'), history: { type: 'array', items: ref('Attempt') }, journal: { type: 'array', items: ref('JournalEntry') }, dead: { type: ['object', 'null'] }, feedback: { type: ['object', 'null'], description: 'Provider feedback (docs/feedback.md): summary `status`, `hard`, `count` and `events` in arrival order' } },
            },
            'The operation',
          ),
          '404': errorResponse('No such operation (never claimed, or past retention)'),
          ...common,
        },
      },
    },
    '/admin/api/story/{key}': {
      get: {
        tags: ['lookup'],
        summary: 'The story of a message or operation: every recorded step on one time axis, with the trace id (the page: /admin/story/{key})',
        parameters: [keyParam],
        responses: {
          '200': json(
            {
              type: 'object',
              required: ['key', 'kind', 'routes', 'operations', 'events'],
              properties: {
                key: hexKey,
                kind: { type: 'string', enum: ['message', 'operation'] },
                messageKey: hexKey,
                traceId: { type: 'string', pattern: '^[0-9a-f]{32}$' },
                routes: { type: 'array', items: { type: 'string' } },
                operations: { type: 'array', items: { type: 'object' } },
                events: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['at', 'kind', 'title', 'detail'],
                    properties: { at: { type: 'integer' }, kind: { type: 'string' }, operationKey: hexKey, title: { type: 'string' }, detail: { type: 'object', additionalProperties: { type: 'string' } } },
                  },
                },
              },
            },
            'The story, oldest step first',
          ),
          '404': errorResponse('No such message or operation (or past retention)'),
          ...common,
        },
      },
    },
    '/admin/api/messages/{key}': {
      get: {
        tags: ['lookup'],
        summary: 'A message and every operation it fanned out to',
        parameters: [keyParam],
        responses: {
          '200': json(
            {
              type: 'object',
              required: ['message', 'operations'],
              properties: {
                message: ref('Message'),
                operations: { type: 'array', items: { type: 'object', required: ['operationKey', 'status'], properties: { operationKey: hexKey, status: { enum: [...statuses, 'unclaimed'] } } } },
              },
            },
            'The message',
          ),
          '404': errorResponse('No such message (past retention)'),
          ...common,
        },
      },
    },
    '/admin/api/dlq': {
      get: {
        tags: ['dlq'],
        summary: 'Dead operations, oldest first',
        parameters: [
          { name: 'limit', in: 'query', schema: { type: 'string', pattern: '^[0-9]+$' }, description: '1..1000, default 100' },
          { name: 'offset', in: 'query', schema: { type: 'string', pattern: '^[0-9]+$' } },
          { name: 'filter', in: 'query', schema: { type: 'string', minLength: 1, maxLength: 200 }, description: 'A reason, an error code or a channel' },
        ],
        responses: {
          '200': json(
            {
              type: 'object',
              required: ['depth', 'offset', 'limit', 'items'],
              properties: {
                depth: { type: 'integer', minimum: 0 },
                offset: { type: 'integer' },
                limit: { type: 'integer' },
                filter: { type: 'string' },
                items: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['operationKey', 'reason', 'error', 'attempts', 'diedAt', 'status'],
                    properties: {
                      operationKey: { type: 'string' },
                      reason: { type: 'string' },
                      error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } } },
                      attempts: { type: 'integer' },
                      diedAt: { type: 'number' },
                      status: { type: ['string', 'null'] },
                    },
                  },
                },
              },
            },
            'A page of the DLQ',
          ),
          ...common,
        },
      },
    },
    '/admin/api/dlq/{key}/replay': {
      post: {
        tags: ['dlq'],
        summary: 'Replay a dead or suppressed operation under the same operation key',
        parameters: [keyParam],
        responses: {
          '202': json({ type: 'object', required: ['operationKey', 'result', 'message', 'by'], properties: { result: { const: 'replayed' }, from: { enum: ['dead', 'suppressed'] } } }, 'Queued again'),
          '200': json({ type: 'object', required: ['operationKey', 'result', 'message', 'by'], properties: { result: { const: 'already_sent' } } }, 'Already sent; nothing sent again'),
          '404': errorResponse('No such operation (code `NOT_FOUND`)'),
          '409': errorResponse('Still in progress (code `NOT_REPLAYABLE`)'),
          ...common,
        },
      },
    },
    '/admin/api/scheduled': {
      get: {
        tags: ['scheduling'],
        summary: 'Scheduled operations, soonest due first, with why they wait',
        parameters: [{ name: 'limit', in: 'query', schema: { type: 'string', pattern: '^[0-9]+$' } }],
        responses: {
          '200': json(
            {
              type: 'object',
              required: ['total', 'limit', 'scheduled'],
              properties: {
                total: { type: 'integer', minimum: 0 },
                limit: { type: 'integer' },
                scheduled: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['operationKey', 'dueAt', 'reason', 'status'],
                    properties: { operationKey: hexKey, dueAt: { type: 'number' }, reason: { enum: ['send_at', 'delay', null] }, messageKey: { type: ['string', 'null'] }, recipient: { type: ['string', 'null'] }, channel: { type: ['string', 'null'] }, status: { enum: [...statuses, null] } },
                  },
                },
              },
            },
            'Scheduled operations',
          ),
          ...common,
        },
      },
    },
    '/admin/api/digests': {
      get: {
        tags: ['scheduling'],
        summary: 'Open digests, soonest close first, with their item counts (the page: /admin/digests)',
        parameters: [{ name: 'limit', in: 'query', schema: { type: 'string', pattern: '^[0-9]+$' }, description: '1..1000, default 100' }],
        responses: {
          '200': json(
            {
              type: 'object',
              required: ['open', 'limit', 'digests'],
              properties: {
                open: { type: 'integer', minimum: 0, description: 'How many digests are open in all' },
                limit: { type: 'integer' },
                digests: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['id', 'group', 'seq', 'route', 'recipient', 'key', 'count', 'openedAt', 'closeAt'],
                    properties: {
                      id: { ...hexKey, description: "The digest id: its flush operation's message key" },
                      group: hexKey,
                      seq: { type: 'integer', minimum: 1 },
                      route: { type: 'string' },
                      recipient: { type: 'string' },
                      key: { type: 'string', description: 'The rendered digest key; empty: one digest per recipient' },
                      count: { type: 'integer', minimum: 0 },
                      openedAt: { type: 'number' },
                      closeAt: { type: 'number' },
                    },
                  },
                },
              },
            },
            'Open digests',
          ),
          '404': errorResponse('Digests are not wired in this dashboard (code `NOT_FOUND`)'),
          ...common,
        },
      },
    },
    '/admin/api/cancellations': {
      post: {
        tags: ['scheduling'],
        summary: 'Cancel an event, some of its recipients, or every event of a cancellation key (the body of ingest\'s POST /v1/cancellations)',
        responses: {
          '200': json(
            {
              type: 'object',
              required: ['operations', 'pending', 'by'],
              properties: {
                operations: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['operationKey', 'recipient', 'channel', 'outcome'],
                    properties: {
                      // '' for a digest member whose digest has no flush operation yet.
                      operationKey: { type: 'string', pattern: '^([0-9a-f]{64})?$' },
                      recipient: { type: 'string' },
                      channel: { type: 'string' },
                      outcome: { enum: cancelOutcomes },
                      digest: { type: 'object', required: ['route', 'key', 'group'], properties: { route: { type: 'string' }, key: { type: 'string' }, group: hexKey, id: hexKey } },
                    },
                  },
                },
                pending: { type: 'boolean' },
                by: { type: 'string' },
              },
            },
            'What the cancel did to each operation; pending: operations still to come are born cancelled',
          ),
          '503': errorResponse('Redis did not confirm (code `STORE_UNAVAILABLE`); retry, a cancel is idempotent'),
          ...common,
          '400': errorResponse('Invalid body (`INVALID_REQUEST`), or no target or several (`INVALID_CANCELLATION`)'),
          '403': errorResponse('From another origin (code `CROSS_ORIGIN`): the same guard as a replay'),
        },
      },
    },
    '/admin/api/journal': {
      get: {
        tags: ['journal'],
        summary: 'Journal entries between two instants (default: the last hour), oldest first',
        parameters: [
          { name: 'from', in: 'query', schema: { type: 'string' }, description: 'Epoch ms or ISO 8601 with a zone' },
          { name: 'to', in: 'query', schema: { type: 'string' } },
          { name: 'limit', in: 'query', schema: { type: 'string', pattern: '^[0-9]+$' } },
        ],
        responses: {
          '200': json(
            { type: 'object', required: ['from', 'to', 'limit', 'count', 'entries'], properties: { from: { type: 'string', format: 'date-time' }, to: { type: 'string', format: 'date-time' }, limit: { type: 'integer' }, count: { type: 'integer' }, entries: { type: 'array', items: ref('JournalEntry') } } },
            'Entries',
          ),
          ...common,
        },
      },
    },
    '/admin/api/sources': {
      get: {
        tags: ['sources'],
        summary: 'Every configured source with what a relay last reported of it',
        responses: {
          '200': json(
            {
              type: 'object',
              required: ['sources'],
              properties: {
                sources: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['source', 'type', 'state', 'lag', 'reportedAt', 'reporter'],
                    properties: {
                      source: { type: 'string' },
                      type: { type: 'string' },
                      state: { enum: ['reachable', 'unreachable', 'stale', 'no report'] },
                      lag: { type: ['integer', 'null'], minimum: 0 },
                      reportedAt: { type: ['string', 'null'], format: 'date-time' },
                      reporter: { type: ['string', 'null'] },
                    },
                  },
                },
              },
            },
            'Sources',
          ),
          ...common,
        },
      },
    },
    ...SUPPRESSION_PATHS,
    ...probePaths,
  },
} as const;
