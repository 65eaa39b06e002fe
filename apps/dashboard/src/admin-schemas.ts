import { OPERATION_STATUSES } from '@singleshot/core';
import type { OpenApiJson } from '@singleshot/http';

/** An operation or message key in an answer: a sha256 hex digest. */
export const hexKey = { type: 'string', pattern: '^[0-9a-f]{64}$' };

/** Every operation status, as the answers' enums list them. */
export const statuses: string[] = [...OPERATION_STATUSES];

/** A JSON answer of the document. */
export const jsonAnswer = (schema: unknown, description: string): OpenApiJson => ({ description, content: { 'application/json': { schema } } });

/** A reference to one of the admin document's schemas. */
export const ref = (name: string): OpenApiJson => ({ $ref: `#/components/schemas/${name}` });

/** The records several admin answers share, under `components.schemas`. */
export const RECORD_SCHEMAS: OpenApiJson = {
  Operation: {
    type: 'object',
    required: ['operationKey', 'status', 'fence', 'attempts', 'replays', 'journalIds'],
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
      owner: { type: 'string', description: 'The delivery worker that claimed it last' },
      reason: { type: 'string' },
      lastErrorCode: { type: 'string' },
      lastError: { type: 'string' },
      createdAt: { type: 'number' },
      updatedAt: { type: 'number' },
      sentAt: { type: 'number' },
      leaseUntil: { type: 'number', description: 'Until when the current claim holds the lease (epoch ms); gone once terminal' },
      replays: { type: 'integer', minimum: 0 },
      replayedBy: { type: 'string' },
      replayedAt: { type: 'number' },
      waitingFor: { type: 'string', description: 'What it waits for before it may be sent (e.g. `document:purchase-order`)' },
      waitingKey: { type: 'string' },
      waitingSince: { type: 'number' },
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
    required: ['at', 'attempt', 'fence', 'outcome'],
    properties: {
      at: { type: 'number' },
      attempt: { type: 'integer' },
      fence: { type: 'string' },
      outcome: { type: 'string' },
      step: { type: 'string' },
      by: { type: 'string', description: 'Who replayed (step `replay`)' },
      via: { type: 'string' },
      provider: { type: 'string' },
      externalId: { type: 'string' },
      errorCode: { type: 'string' },
      error: { type: 'string' },
      durationMs: { type: 'number' },
      note: { type: 'string' },
    },
  },
  JournalEntry: {
    type: 'object',
    required: ['id', 'shard', 'type', 'ts', 'fields'],
    properties: { id: { type: 'string' }, shard: { type: 'integer' }, type: { type: 'string' }, ts: { type: 'number' }, fields: { type: 'object', additionalProperties: { type: 'string' } } },
  },
  Message: {
    type: 'object',
    required: ['messageKey', 'tenant', 'arrivals', 'via', 'viaFirstAt', 'operations', 'digests'],
    properties: {
      messageKey: hexKey,
      tenant: { type: 'string', description: 'The tenant whose producer key posted it (`default` without one; docs/tenants.md)' },
      firstArrivalAt: { type: 'number' },
      lastArrivalAt: { type: 'number' },
      firstVia: { type: 'string' },
      arrivals: { type: 'integer', minimum: 0 },
      via: { type: 'object', additionalProperties: { type: 'integer' } },
      viaFirstAt: { type: 'object', additionalProperties: { type: 'number' }, description: 'The first arrival through each channel (epoch ms)' },
      queuedAt: { type: 'number' },
      decidedAt: { type: 'number' },
      trace: { type: 'string', description: "The first decision's W3C traceparent, when it was traced" },
      operations: { type: 'array', items: hexKey },
      digests: {
        type: 'array',
        items: { type: 'object', required: ['group', 'route', 'recipient', 'key', 'channel'], properties: { group: hexKey, route: { type: 'string' }, recipient: { type: 'string' }, key: { type: 'string' }, channel: { type: 'string' } } },
      },
      cancelled: {
        type: 'object',
        required: ['recipients', 'at', 'reason', 'by'],
        properties: { recipients: { oneOf: [{ const: '*' }, { type: 'array', items: { type: 'string' } }] }, at: { type: 'number' }, reason: { type: 'string' }, by: { type: 'string' } },
      },
    },
  },
};
