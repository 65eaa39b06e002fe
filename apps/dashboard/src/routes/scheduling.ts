import { cancelTargetOf, cancellationBodySchema, type CancelScope } from '@singleshot/intake';
import { errorResponse } from '@singleshot/observability';
import { CANCEL_OUTCOMES } from '@singleshot/store';
import { adminRoute, tagged, type AdminRoute } from '../admin-route';
import { hexKey, jsonAnswer, statuses } from '../admin-schemas';
import { ApiError } from '../errors';
import type { AdminApiDeps } from '../deps';
import { listLimitQuery } from '../params';
import { TENANT_SCAN_MAX, maySeeMessage } from '../tenancy';

const orNull = { type: ['string', 'null'] };

// An operator may cancel any source's events, as the CLI may: the dashboard's
// credentials are the operator's, not a producer key limited to some sources.
const OPERATOR: Omit<CancelScope, 'name'> = { sources: undefined };

/** The entries whose operation is one of `tenant`'s messages'. */
async function ownedBy<E extends { op: { messageKey?: string } | null }>(deps: AdminApiDeps, tenant: string, entries: readonly E[]): Promise<E[]> {
  const owned = await Promise.all(entries.map((e) => maySeeMessage(deps, tenant, e.op?.messageKey)));
  return entries.filter((_, i) => owned[i]);
}

/** `GET /scheduled`: the scheduled operations, soonest due first, with why they wait. */
const scheduledRoute = adminRoute({
  method: 'GET', path: '/scheduled',
  query: listLimitQuery,
  tenants: 'scoped',
  doc: {
    summary: 'Scheduled operations, soonest due first, with why they wait',
    responses: {
      '200': jsonAnswer(
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
                required: ['operationKey', 'dueAt', 'reason', 'messageKey', 'recipient', 'channel', 'status'],
                properties: { operationKey: hexKey, dueAt: { type: 'number' }, reason: { enum: ['send_at', 'delay', null] }, messageKey: orNull, recipient: orNull, channel: orNull, status: { enum: [...statuses, null] } },
              },
            },
          },
        },
        'Scheduled operations',
      ),
      '404': errorResponse('Scheduled operations are not wired in this dashboard (code `NOT_FOUND`)'),
    },
  },
  handle: async (deps, { query: { limit }, tenant }) => {
    if (!deps.scheduled) throw new ApiError(404, 'NOT_FOUND', 'scheduled operations are not wired in this dashboard');
    // A tenant's view: its own among the soonest TENANT_SCAN_MAX, and their number as the total.
    const { total, entries } = await deps.scheduled.soonest(tenant === undefined ? limit : TENANT_SCAN_MAX);
    const read = await Promise.all(entries.map(async (entry) => ({ ...entry, op: await deps.operations.get(entry.operationKey) })));
    const seen = tenant === undefined ? read : await ownedBy(deps, tenant, read);
    const scheduled = seen.slice(0, limit).map(({ operationKey, dueAt, op }) => ({
      operationKey,
      dueAt,
      reason: op?.scheduleReason ?? null,
      messageKey: op?.messageKey ?? null,
      recipient: op?.recipient ?? null,
      channel: op?.channel ?? null,
      status: op?.status ?? null,
    }));
    return { body: { total: tenant === undefined ? total : seen.length, limit, scheduled } };
  },
});

const cancelled = {
  type: 'object',
  required: ['operationKey', 'recipient', 'channel', 'outcome'],
  properties: {
    // '' for a digest member whose digest has no flush operation yet.
    operationKey: { type: 'string', pattern: '^([0-9a-f]{64})?$' },
    recipient: { type: 'string' },
    channel: { type: 'string' },
    outcome: { enum: [...CANCEL_OUTCOMES] },
    digest: { type: 'object', required: ['route', 'key', 'group'], properties: { route: { type: 'string' }, key: { type: 'string' }, group: hexKey, id: hexKey } },
  },
};

/**
 * `POST /cancellations`: cancels with the body of ingest's `POST
 * /v1/cancellations`, journaled as `dashboard:<who>`. It changes state: the
 * origin guard in front of the admin API refuses it from another site, as it
 * refuses a replay.
 */
const cancelRoute = adminRoute({
  method: 'POST', path: '/cancellations',
  json: { schema: cancellationBodySchema, name: 'Cancellation' },
  tenants: 'scoped',
  doc: {
    summary: "Cancel an event, some of its recipients, or every event of a cancellation key (the body of ingest's POST /v1/cancellations)",
    responses: {
      '200': jsonAnswer(
        { type: 'object', required: ['operations', 'pending', 'by'], properties: { operations: { type: 'array', items: cancelled }, pending: { type: 'boolean' }, by: { type: 'string' } } },
        'What the cancel did to each operation; pending: operations still to come are born cancelled',
      ),
      '400': errorResponse('Invalid body (`INVALID_REQUEST`), or no target or several (`INVALID_CANCELLATION`)'),
      '403': errorResponse('From another origin (code `CROSS_ORIGIN`): the same guard as a replay'),
      '404': errorResponse('Cancels are not wired in this dashboard, or a tenant\'s key named a message key of no message of its tenant (code `NOT_FOUND`)'),
      '503': errorResponse('Redis did not confirm (code `STORE_UNAVAILABLE`); retry, a cancel is idempotent'),
    },
  },
  handle: async (deps, { body, who, tenant, setHeader }) => {
    if (!deps.cancel) throw new ApiError(404, 'NOT_FOUND', 'cancels are not wired in this dashboard');
    // A tenant's key cancels as it would at ingest: its tenant's events, ids and cancellation keys.
    const target = cancelTargetOf(body, { ...OPERATOR, name: who, tenant });
    if (target.kind === 'refused') throw new ApiError(target.status, target.code, target.message);
    const by = `dashboard:${who}`;
    let done;
    try {
      done = await deps.cancel(target, body.recipients, { by, reason: body.reason });
    } catch (err) {
      // As at ingest: whatever the store did not confirm may be retried, a cancel is idempotent.
      deps.logger.warn({ event: 'cancel_store_unavailable', err: { code: (err as { code?: unknown }).code, message: (err as Error).message } }, 'cancel not carried out: Redis unavailable');
      setHeader('retry-after', '1');
      throw new ApiError(503, 'STORE_UNAVAILABLE', 'the cancel could not be carried out; retry (it is idempotent)');
    }
    if (!done) throw new ApiError(404, 'NOT_FOUND', `no message ${body.messageKey ?? ''} (records are kept for the retention period)`);
    return { body: { operations: done.operations, pending: done.pending, by } };
  },
});

/** What is still to come and how to take it back. */
export const SCHEDULING_ROUTES: readonly AdminRoute[] = tagged('scheduling', [scheduledRoute, cancelRoute]);
