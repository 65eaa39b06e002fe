import { z } from 'zod';
import { listDead } from '@singleshot/queues';
import { errorResponse } from '@singleshot/observability';
import { adminRoute, tagged, type AdminRoute } from '../admin-route';
import { hexKey, jsonAnswer } from '../admin-schemas';
import { ApiError } from '../errors';
import { keyParams } from '../params';
import type { AdminApiDeps } from '../deps';
import type { ReplayOutcome } from '../replay';
import { TENANT_SCAN_MAX, maySeeMessage, maySeeOperation } from '../tenancy';

const dlqQuerySchema = z.strictObject({
  limit: z.string().regex(/^\d+$/, 'expected a positive integer').transform(Number).pipe(z.int().min(1).max(1000)).optional().meta({ description: '1..1000, default 100' }),
  offset: z.string().regex(/^\d+$/, 'expected a non-negative integer').transform(Number).pipe(z.int().min(0).max(1_000_000)).optional(),
  filter: z.string().min(1).max(200).optional().meta({ description: 'A reason (`permanent`, `attempts_exhausted`, …), an error code, or a channel' }),
});

/** A replay that did nothing is not an error when the operation was sent: nothing more can be done. */
function answerOf(outcome: ReplayOutcome): { status: number; message: string } {
  switch (outcome.result) {
    case 'replayed':
      return { status: 202, message: `queued for delivery again under the same operation key (was ${outcome.from})` };
    case 'already_sent':
      return { status: 200, message: `already sent (${outcome.provider} ${outcome.externalId}); nothing was sent again` };
    case 'not_replayable':
      return { status: 409, message: `the operation is ${outcome.status}, not dead or suppressed: it is still in progress and a replay would change nothing` };
    case 'not_found':
      return { status: 404, message: 'no such operation (never claimed, or past the retention period)' };
  }
}

const text = { type: 'string' };
const deadItem = {
  type: 'object',
  required: ['operationKey', 'reason', 'error', 'attempts', 'diedAt', 'status'],
  properties: {
    operationKey: hexKey,
    messageKey: text,
    recipient: text,
    channel: text,
    route: text,
    reason: text,
    error: { type: 'object', required: ['code', 'message'], properties: { code: text, message: text, name: { type: 'string', description: 'The error class a provider threw (`PermanentError`, …), when it was one' } } },
    attempts: { type: 'integer', minimum: 0 },
    diedAt: { type: 'number' },
    status: { type: ['string', 'null'], description: 'Where the operation is now (the record stays until replayed)' },
  },
};

/** The DLQ as an operator sees it: its depth, and its first `upTo` records. */
async function everyDead(deps: AdminApiDeps, upTo: number, filter: string | undefined) {
  const [depth, entries] = await Promise.all([deps.queues.dead.getWaitingCount(), listDead(deps.queues, { limit: upTo, ...(filter ? { filter } : {}) })]);
  return { depth, entries };
}

/** The DLQ as a tenant sees it: its own dead records among the first `TENANT_SCAN_MAX`, and their number as the depth. */
async function tenantDead(deps: AdminApiDeps, tenant: string, filter: string | undefined) {
  const all = await listDead(deps.queues, { limit: TENANT_SCAN_MAX, ...(filter ? { filter } : {}) });
  const owned = await Promise.all(all.map((d) => maySeeMessage(deps, tenant, messageKeyOf(d.job))));
  const entries = all.filter((_, i) => owned[i]);
  return { depth: entries.length, entries };
}

function messageKeyOf(job: unknown): string | undefined {
  const key = (job as { messageKey?: unknown } | undefined)?.messageKey;
  return typeof key === 'string' ? key : undefined;
}

/** `GET /dlq`: dead operations, oldest first (a tenant's own only). */
const listRoute = adminRoute({
  method: 'GET', path: '/dlq',
  query: dlqQuerySchema,
  tenants: 'scoped',
  doc: {
    summary: 'Dead operations, oldest first',
    responses: {
      '200': jsonAnswer(
        {
          type: 'object',
          required: ['depth', 'offset', 'limit', 'items'],
          properties: { depth: { type: 'integer', minimum: 0 }, offset: { type: 'integer' }, limit: { type: 'integer' }, filter: text, items: { type: 'array', items: deadItem } },
        },
        'A page of the DLQ',
      ),
    },
  },
  handle: async (deps, { query: { limit = 100, offset = 0, filter }, tenant }) => {
    const { depth, entries } = tenant === undefined ? await everyDead(deps, offset + limit, filter) : await tenantDead(deps, tenant, filter);
    const items = await Promise.all(
      entries.slice(offset, offset + limit).map(async (d) => {
        const rendered = d.job as Partial<Record<'recipient' | 'channel' | 'route' | 'messageKey', unknown>>;
        const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
        // The record stays until replayed; the state says where the operation is now.
        const current = await deps.operations.get(d.operationKey);
        return {
          operationKey: d.operationKey,
          messageKey: str(rendered.messageKey),
          recipient: str(rendered.recipient),
          channel: str(rendered.channel),
          route: str(rendered.route),
          reason: d.reason,
          error: d.error,
          attempts: d.attempts.length,
          diedAt: d.diedAt,
          status: current?.status ?? null,
        };
      }),
    );
    return { body: { depth, offset, limit, ...(filter ? { filter } : {}), items } };
  },
});

const replayed = (result: object, extra: object = {}) => ({
  type: 'object',
  required: ['operationKey', 'result', 'message', 'by'],
  properties: { operationKey: hexKey, result, message: text, by: text, ...extra },
});

/** `POST /dlq/:key/replay`: the same operation key queued again. */
const replayRoute = adminRoute({
  method: 'POST', path: '/dlq/:key/replay',
  params: keyParams,
  tenants: 'scoped',
  doc: {
    summary: 'Replay a dead or suppressed operation under the same operation key',
    responses: {
      '202': jsonAnswer(replayed({ const: 'replayed' }, { from: { enum: ['dead', 'suppressed'] }, journalId: text, job: { enum: ['added', 'present', 'promoted'] } }), 'Queued again'),
      '200': jsonAnswer(replayed({ const: 'already_sent' }, { provider: text, externalId: text }), 'Already sent; nothing sent again'),
      '404': errorResponse('No such operation (code `NOT_FOUND`)'),
      '409': errorResponse('Still in progress (code `NOT_REPLAYABLE`)'),
    },
  },
  handle: async (deps, { params: { key }, who, tenant }) => {
    const outcome = (await maySeeOperation(deps, tenant, key)) ? await deps.replay(key, { who, via: 'api' }) : ({ operationKey: key, result: 'not_found' } as const);
    const { status, message } = answerOf(outcome);
    if (status >= 400) throw new ApiError(status, outcome.result === 'not_found' ? 'NOT_FOUND' : 'NOT_REPLAYABLE', `${key}: ${message}`, outcome);
    return { status, body: { ...outcome, message, by: who } };
  },
});

/** The dead-letter queue: its records, and the replay of one. */
export const DLQ_ROUTES: readonly AdminRoute[] = tagged('dlq', [listRoute, replayRoute]);
