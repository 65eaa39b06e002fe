import { errorResponse } from '@singleshot/observability';
import { adminRoute, tagged, type AdminRoute } from '../admin-route';
import { hexKey, jsonAnswer, statuses } from '../admin-schemas';
import { ApiError } from '../errors';
import { keyParams, listLimitQuery } from '../params';

const orNull = (schema: object) => ({ anyOf: [schema, { type: 'null' }] });
const text = { type: 'string' };
const notWired = errorResponse('Documents are not wired in this dashboard (code `NOT_FOUND`)');

/** `GET /waiting`: operations that wait for a document before they may be sent, oldest first. */
const waitingRoute = adminRoute({
  method: 'GET', path: '/waiting',
  query: listLimitQuery,
  doc: {
    summary: 'Operations waiting for their documents before they may be sent, oldest first: nothing waits silently',
    responses: {
      '200': jsonAnswer(
        {
          type: 'object',
          required: ['waiting'],
          properties: {
            waiting: {
              type: 'array',
              items: {
                type: 'object',
                required: ['operationKey', 'since', 'waitingFor', 'recipient', 'channel', 'status'],
                properties: { operationKey: hexKey, since: { type: 'number' }, waitingFor: orNull(text), recipient: orNull(text), channel: orNull(text), status: { enum: [...statuses, null] } },
              },
            },
          },
        },
        'Waiting operations',
      ),
      '404': notWired,
    },
  },
  handle: async (deps, { query: { limit } }) => {
    if (!deps.documents) throw new ApiError(404, 'NOT_FOUND', 'documents are not wired in this dashboard');
    const waiting = await deps.documents.waiting(limit);
    const operations = await Promise.all(
      waiting.map(async ({ operationKey, since }) => {
        const op = await deps.operations.get(operationKey);
        return { operationKey, since, waitingFor: op?.waitingFor ?? null, recipient: op?.recipient ?? null, channel: op?.channel ?? null, status: op?.status ?? null };
      }),
    );
    return { body: { waiting: operations } };
  },
});

const documentRecord = {
  type: 'object',
  required: ['documentKey', 'status', 'attempts', 'fence', 'replays', 'journalIds'],
  properties: {
    documentKey: hexKey,
    status: { enum: ['pending', 'rendering', 'failed', 'stored', 'dead'] },
    attempts: { type: 'integer', minimum: 0 },
    fence: text,
    messageKey: text,
    stored: {
      type: 'object',
      required: ['checksum', 'storeKey', 'size', 'fileName', 'contentType'],
      properties: { checksum: text, storeKey: text, size: { type: 'integer', minimum: 0 }, fileName: text, contentType: text },
    },
    lastErrorCode: text,
    lastError: text,
    nextAttemptAt: { type: 'number' },
    owner: text,
    replays: { type: 'integer', minimum: 0 },
    journalIds: { type: 'array', items: text },
  },
};

/** `GET /documents/:key`: a document's render state (status, attempts, last error, checksum). */
const documentRoute = adminRoute({
  method: 'GET', path: '/documents/:key',
  params: keyParams,
  doc: {
    summary: "A document's render state: status, attempts, last error, and where it is stored",
    responses: {
      '200': jsonAnswer({ type: 'object', required: ['document'], properties: { document: documentRecord } }, 'The document'),
      '404': errorResponse('No such document (or past retention), or documents are not wired in this dashboard (code `NOT_FOUND`)'),
    },
  },
  handle: async (deps, { params: { key } }) => {
    if (!deps.documents) throw new ApiError(404, 'NOT_FOUND', 'documents are not wired in this dashboard');
    const doc = await deps.documents.get(key);
    if (!doc) throw new ApiError(404, 'NOT_FOUND', `no document ${key} (records are kept for the retention period)`);
    const { job: _job, ...rest } = doc;
    return { body: { document: rest } };
  },
});

/** Operations waiting for their documents, and a document's render state. */
export const WAITING_ROUTES: readonly AdminRoute[] = tagged('documents', [waitingRoute, documentRoute]);
