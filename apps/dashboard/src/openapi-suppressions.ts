import { errorResponse } from '@singleshot/observability';

const json = (schema: unknown, description: string) => ({ description, content: { 'application/json': { schema } } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const instant = { oneOf: [{ type: 'integer', minimum: 0 }, { type: 'string', format: 'date-time' }], description: 'Epoch ms or ISO 8601 with a zone' };
const common = {
  '400': errorResponse('Invalid path, query or body (code `INVALID_REQUEST`; details list the problems)'),
  '401': errorResponse('No valid credentials (code `UNAUTHORIZED`)'),
  '404': errorResponse('Suppressions are not wired in this dashboard (code `NOT_FOUND`)'),
  '500': errorResponse('Internal error'),
};
const changing = {
  ...common,
  '400': errorResponse('Invalid body (`INVALID_REQUEST`, also for an expiry not in the future), or a channel that is not configured (`UNKNOWN_CHANNEL`)'),
  '403': errorResponse('From another origin (code `CROSS_ORIGIN`): the same guard as a replay'),
};
const target = {
  channel: { type: 'string', minLength: 1 },
  recipient: { type: 'string', minLength: 1, description: 'As the operation has it: an address is compared lower-cased, other recipients exactly' },
  category: { type: 'string', minLength: 1, description: 'Only this category of the channel (default: all)' },
};
const changed = (flag: 'added' | 'removed') => ({
  type: 'object',
  required: [flag, 'by', 'recipient'],
  properties: { [flag]: { type: 'boolean' }, by: { type: 'string' }, recipient: ref('RecipientSuppressions') },
});

/** The suppression list's schemas, merged into the admin OpenAPI's components. */
export const SUPPRESSION_SCHEMAS = {
  Suppression: {
    type: 'object',
    required: ['channel', 'recipient', 'reason', 'origin', 'by', 'at', 'expired'],
    properties: {
      ...target,
      reason: { type: 'string' },
      origin: { type: 'string', description: '`bounce`, `complaint`, `unsubscribe` (provider feedback) or `operator`' },
      by: { type: 'string', description: '`feedback:<provider>:<event id>`, `dashboard:<user>`, `cli:<user@host>`' },
      at: { type: 'number' },
      expiresAt: { type: 'number' },
      expired: { type: 'boolean', description: 'Past its expiry: the claim no longer honours it' },
    },
  },
  RecipientSuppressions: {
    type: 'object',
    required: ['recipient', 'suppressions', 'optOuts', 'version'],
    properties: {
      recipient: { type: 'string' },
      suppressions: { type: 'array', items: ref('Suppression') },
      optOuts: { type: 'array', items: { type: 'object', required: ['at', 'by'], properties: { channel: { type: 'string' }, category: { type: 'string' }, at: { type: 'number' }, by: { type: 'string' } } } },
      version: { type: 'integer', minimum: 0 },
    },
  },
} as const;

/** `/admin/api/suppressions…`, merged into the admin OpenAPI's paths. */
export const SUPPRESSION_PATHS = {
  '/admin/api/suppressions': {
    get: {
      tags: ['suppressions'],
      summary: 'Recipients with a suppression that holds or an opt-out, newest on the list first, paged by cursor',
      parameters: [
        { name: 'limit', in: 'query', schema: { type: 'string', pattern: '^[0-9]+$' }, description: '1..1000, default 100' },
        { name: 'cursor', in: 'query', schema: { type: 'string', minLength: 1, maxLength: 8192 }, description: 'The next page: the `nextCursor` of the previous answer (`offset` is refused, 400)' },
      ],
      responses: {
        '200': json(
          {
            type: 'object',
            required: ['limit', 'recipients', 'nextCursor'],
            properties: { limit: { type: 'integer' }, recipients: { type: 'array', items: ref('RecipientSuppressions') }, nextCursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page; null: none' } },
          },
          'A page (recipients whose every suppression was removed or has expired are left out)',
        ),
        ...common,
      },
    },
    post: {
      tags: ['suppressions'],
      summary: 'Suppress a recipient on a channel (origin `operator`): no claim after the answer sends to them',
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { type: 'object', additionalProperties: false, required: ['channel', 'recipient', 'reason'], properties: { ...target, reason: { type: 'string', minLength: 1 }, expiresAt: instant } } } },
      },
      responses: {
        '201': json(changed('added'), 'Added'),
        '200': json(changed('added'), 'The same suppression existed; the first one stands (added: false)'),
        ...changing,
      },
    },
    delete: {
      tags: ['suppressions'],
      summary: 'Remove a suppression: the next claims may send again; nothing it stopped is sent again',
      requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', additionalProperties: false, required: ['channel', 'recipient'], properties: target } } } },
      responses: { '200': json(changed('removed'), 'Removed (removed: false when there was none)'), ...changing },
    },
  },
  '/admin/api/suppressions/audit': {
    get: {
      tags: ['suppressions'],
      summary: 'Every change of a suppression or an opt-out (who, when, why), newest first, within the retention period',
      parameters: [
        { name: 'limit', in: 'query', schema: { type: 'string', pattern: '^[0-9]+$' }, description: '1..1000, default 100' },
        { name: 'before', in: 'query', schema: { type: 'string', pattern: '^[0-9]+-[0-9]+$' }, description: 'The next page: entries older than this id (the `before` of the previous answer)' },
      ],
      responses: {
        '200': json(
          {
            type: 'object',
            required: ['limit', 'entries'],
            properties: {
              limit: { type: 'integer' },
              before: { type: 'string', description: 'Present when the page is full: pass it for the next one' },
              entries: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['id', 'at', 'change', 'recipient', 'detail'],
                  properties: { id: { type: 'string' }, at: { type: 'number' }, change: { enum: ['add', 'add_existing', 'remove', 'opt_outs'] }, recipient: { type: 'string' }, detail: { type: 'object', additionalProperties: { type: 'string' } } },
                },
              },
            },
          },
          'Audit entries',
        ),
        ...common,
      },
    },
  },
  '/admin/api/suppressions/{recipient}': {
    get: {
      tags: ['suppressions'],
      summary: "A recipient's suppressions and opt-outs (empty lists when none)",
      parameters: [{ name: 'recipient', in: 'path', required: true, schema: { type: 'string', minLength: 1 } }],
      responses: { '200': json(ref('RecipientSuppressions'), 'The recipient'), ...common },
    },
  },
} as const;
