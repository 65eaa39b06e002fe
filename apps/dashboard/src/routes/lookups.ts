import { errorResponse } from '@singleshot/observability';
import { readStory } from '@singleshot/story';
import { adminRoute, tagged, type AdminRoute } from '../admin-route';
import { hexKey, jsonAnswer, ref } from '../admin-schemas';
import { ApiError } from '../errors';
import { keyParams } from '../params';
import { maySeeMessage } from '../tenancy';
import { storyDeps } from './story';

/** `GET /operations/:key`: an operation with its attempts and journal entries (and its DLQ record when dead). */
const operationRoute = adminRoute({
  method: 'GET', path: '/operations/:key',
  params: keyParams,
  tenants: 'scoped',
  doc: {
    summary: 'An operation with its attempts, journal entries and DLQ record',
    responses: {
      '200': jsonAnswer(
        {
          type: 'object',
          required: ['operation', 'history', 'journal', 'dead', 'feedback'],
          properties: {
            operation: ref('Operation'),
            history: { type: 'array', items: ref('Attempt') },
            journal: { type: 'array', items: ref('JournalEntry') },
            dead: { type: ['object', 'null'], description: 'The DLQ record, when dead' },
            feedback: { type: ['object', 'null'], description: 'Provider feedback (docs/feedback.md): summary `status`, `hard`, `count` and `events` in arrival order' },
          },
        },
        'The operation',
      ),
      '404': errorResponse('No such operation (never claimed, or past retention)'),
    },
  },
  handle: async (deps, { params: { key }, tenant }) => {
    const operation = await deps.operations.get(key);
    if (!operation || !(await maySeeMessage(deps, tenant, operation.messageKey))) {
      throw new ApiError(404, 'NOT_FOUND', `no operation ${key} (records are kept for the retention period; an operation appears once a delivery worker claims it)`);
    }
    const [history, journal, deadJob, feedback] = await Promise.all([
      deps.operations.history(key),
      deps.journal.forOperation(key, operation.journalIds),
      operation.status === 'dead' ? deps.queues.dead.getJob(key) : Promise.resolve(undefined),
      deps.feedback ? deps.feedback.read(key) : Promise.resolve(undefined),
    ]);
    return { body: { operation, history, journal, dead: deadJob?.data ?? null, feedback: feedback ?? null } };
  },
});

/** `GET /messages/:key`: a message with every operation it fanned out to. */
const messageRoute = adminRoute({
  method: 'GET', path: '/messages/:key',
  params: keyParams,
  tenants: 'scoped',
  doc: {
    summary: 'A message and every operation it fanned out to',
    responses: {
      '200': jsonAnswer(
        {
          type: 'object',
          required: ['message', 'operations'],
          properties: {
            message: ref('Message'),
            operations: {
              type: 'array',
              description: 'Each operation as claimed (an Operation), or `unclaimed` while its deliver job is queued',
              items: { oneOf: [ref('Operation'), { type: 'object', required: ['operationKey', 'status'], properties: { operationKey: hexKey, status: { const: 'unclaimed' } } }] },
            },
          },
        },
        'The message',
      ),
      '404': errorResponse('No such message (past retention)'),
    },
  },
  handle: async (deps, { params: { key }, tenant }) => {
    const message = await deps.messages.get(key);
    if (!message || (tenant !== undefined && message.tenant !== tenant)) throw new ApiError(404, 'NOT_FOUND', `no message ${key} (records are kept for the retention period)`);
    const operations = await Promise.all(
      message.operations.map(async (operationKey) => {
        const record = await deps.operations.get(operationKey);
        // Decided but not yet claimed by a delivery worker: the deliver job is queued.
        return record ?? { operationKey, status: 'unclaimed' as const };
      }),
    );
    return { body: { message, operations } };
  },
});

/** `GET /story/:key`: the story page's data, every step of a message or operation on one time axis. */
const storyRoute = adminRoute({
  method: 'GET', path: '/story/:key',
  params: keyParams,
  tenants: 'scoped',
  doc: {
    summary: 'The story of a message or operation: every recorded step on one time axis, with the trace id (the page: /admin/story/{key})',
    responses: {
      '200': jsonAnswer(
        {
          type: 'object',
          required: ['key', 'kind', 'routes', 'operations', 'events'],
          properties: {
            key: hexKey,
            kind: { type: 'string', enum: ['message', 'operation'] },
            messageKey: hexKey,
            traceId: { type: 'string', pattern: '^[0-9a-f]{32}$' },
            routes: { type: 'array', items: { type: 'string' } },
            operations: {
              type: 'array',
              items: {
                type: 'object',
                required: ['operationKey', 'status', 'recipient', 'channel', 'route', 'provider', 'externalId', 'fence', 'attempts', 'replays'],
                properties: {
                  operationKey: hexKey,
                  status: { type: 'string' },
                  ...Object.fromEntries(['recipient', 'channel', 'route', 'provider', 'externalId', 'fence'].map((name) => [name, { type: 'string' }])),
                  attempts: { type: 'integer', minimum: 0 },
                  replays: { type: 'integer', minimum: 0 },
                },
              },
            },
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
    },
  },
  handle: async (deps, { params: { key }, tenant }) => {
    const story = await readStory(storyDeps(deps), key);
    if (!story || !(await maySeeMessage(deps, tenant, story.messageKey))) throw new ApiError(404, 'NOT_FOUND', `no message or operation ${key} (records are kept for the retention period)`);
    return { body: story };
  },
});

/**
 * "What happened to this notification?": an operation with its attempts and
 * journal entries (and its DLQ record when dead), a message with every
 * operation it fanned out to, or the story of either.
 */
export const LOOKUP_ROUTES: readonly AdminRoute[] = tagged('lookup', [operationRoute, messageRoute, storyRoute]);
