import { z } from 'zod';
import { suppressionAddSchema, suppressionRemoveSchema, SuppressionInputError } from '@singleshot/intake';
import { errorResponse } from '@singleshot/observability';
import type { OpenApiJson } from '@singleshot/http';
import { adminRoute, tagged, type AdminRoute } from '../admin-route';
import { jsonAnswer, ref } from '../admin-schemas';
import type { AdminApiDeps } from '../deps';
import { ApiError } from '../errors';

const count = (max: number, fallback: number) => z.coerce.number().int().min(1).max(max).default(fallback).meta({ description: `1..${max}, default ${fallback}` });
const listQuery = z.strictObject({
  limit: count(1000, 100),
  cursor: z.string().min(1).max(8192).optional().meta({ description: 'The next page: the `nextCursor` of the previous answer' }),
  // Named, so a client still paging by offset learns why instead of meeting an unknown key.
  offset: z.never({ error: 'the list is paged by cursor: pass the nextCursor of the previous page as cursor' }).optional().meta({ description: 'Refused (400): the list is paged by `cursor`' }),
});
const auditQuery = z.strictObject({
  limit: count(1000, 100),
  before: z.string().regex(/^\d{1,15}-\d{1,15}$/, 'expected a stream id such as 1700000000000-0').optional().meta({ description: 'The next page: entries older than this id (the `before` of the previous answer)' }),
});
const recipientParams = z.strictObject({ recipient: z.string().trim().min(1).max(512) });

/** An input the store must not take is the operator's to fix: a 400 naming it. */
async function checked<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof SuppressionInputError) throw new ApiError(400, err.code as 'UNKNOWN_CHANNEL' | 'INVALID_REQUEST', err.message);
    throw err;
  }
}

function need(deps: AdminApiDeps): NonNullable<AdminApiDeps['suppressions']> {
  if (!deps.suppressions) throw new ApiError(404, 'NOT_FOUND', 'suppressions are not wired in this dashboard');
  return deps.suppressions;
}

const text = { type: 'string' };
const notWired = errorResponse('Suppressions are not wired in this dashboard (code `NOT_FOUND`)');
const changing = {
  '400': errorResponse('Invalid body (`INVALID_REQUEST`, also for an expiry not in the future), or a channel that is not configured (`UNKNOWN_CHANNEL`)'),
  '403': errorResponse('From another origin (code `CROSS_ORIGIN`): the same guard as a replay'),
  '404': notWired,
};
const changed = (flag: 'added' | 'removed') => ({
  type: 'object',
  required: [flag, 'by', 'recipient'],
  properties: { [flag]: { type: 'boolean' }, by: text, recipient: ref('RecipientSuppressions') },
});

/** The suppression list's schemas, under the admin document's `components.schemas`. */
export const SUPPRESSION_SCHEMAS: OpenApiJson = {
  Suppression: {
    type: 'object',
    required: ['channel', 'recipient', 'reason', 'origin', 'by', 'at', 'expired'],
    properties: {
      channel: text,
      recipient: { type: 'string', description: 'As the operation has it: an address is compared lower-cased, other recipients exactly' },
      category: { type: 'string', description: 'Only this category of the channel (absent: all)' },
      reason: text,
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
      recipient: text,
      suppressions: { type: 'array', items: ref('Suppression') },
      optOuts: { type: 'array', items: { type: 'object', required: ['at', 'by'], properties: { channel: text, category: text, at: { type: 'number' }, by: text } } },
      version: { type: 'integer', minimum: 0 },
    },
  },
};

/** `GET /suppressions`: recipients with their suppressions and opt-outs, paged. */
const listRoute = adminRoute({
  method: 'GET', path: '/suppressions',
  query: listQuery,
  doc: {
    summary: 'Recipients with a suppression that holds or an opt-out, newest on the list first, paged by cursor',
    responses: {
      '200': jsonAnswer(
        {
          type: 'object',
          required: ['limit', 'recipients', 'nextCursor'],
          properties: { limit: { type: 'integer' }, recipients: { type: 'array', items: ref('RecipientSuppressions') }, nextCursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page; null: none' } },
        },
        'A page (recipients whose every suppression was removed or has expired are left out)',
      ),
      '404': notWired,
    },
  },
  handle: async (deps, { query: { limit, cursor } }) => ({ body: { limit, ...(await checked(() => need(deps).admin.list(cursor, limit))) } }),
});

/** `GET /suppressions/audit`: every change, newest first. Before `/:recipient`: "audit" is this listing, not a recipient. */
const auditRoute = adminRoute({
  method: 'GET', path: '/suppressions/audit',
  query: auditQuery,
  doc: {
    summary: 'Every change of a suppression or an opt-out (who, when, why), newest first, within the retention period',
    responses: {
      '200': jsonAnswer(
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
                properties: { id: text, at: { type: 'number' }, change: { enum: ['add', 'add_existing', 'remove', 'opt_outs'] }, recipient: text, detail: { type: 'object', additionalProperties: { type: 'string' } } },
              },
            },
          },
        },
        'Audit entries',
      ),
      '404': notWired,
    },
  },
  handle: async (deps, { query: { limit, before } }) => {
    const entries = await need(deps).audit({ limit, ...(before ? { before } : {}) });
    return { body: { limit, entries, ...(entries.length === limit ? { before: entries[entries.length - 1]?.id } : {}) } };
  },
});

/** `GET /suppressions/:recipient`: one recipient's suppressions and opt-outs. */
const recipientRoute = adminRoute({
  method: 'GET', path: '/suppressions/:recipient',
  params: recipientParams,
  doc: {
    summary: "A recipient's suppressions and opt-outs (empty lists when none)",
    responses: { '200': jsonAnswer(ref('RecipientSuppressions'), 'The recipient'), '404': notWired },
  },
  handle: async (deps, { params: { recipient } }) => ({ body: await need(deps).admin.get(recipient) }),
});

/** `POST /suppressions`: an operator's suppression (origin `operator`, by `dashboard:<who>`). */
const addRoute = adminRoute({
  method: 'POST', path: '/suppressions',
  json: { schema: suppressionAddSchema, name: 'SuppressionAdd' },
  doc: {
    summary: 'Suppress a recipient on a channel (origin `operator`): no claim after the answer sends to them',
    responses: {
      '201': jsonAnswer(changed('added'), 'Added'),
      '200': jsonAnswer(changed('added'), 'The same suppression existed; the first one stands (added: false)'),
      ...changing,
    },
  },
  handle: async (deps, { body, who }) => {
    const { admin } = need(deps);
    const by = `dashboard:${who}`;
    const added = await checked(() => admin.add(body, by));
    deps.logger.info({ event: 'suppression_added', by, channel: body.channel, category: body.category, added }, 'operator suppression');
    return { status: added ? 201 : 200, body: { added, by, recipient: await admin.get(body.recipient) } };
  },
});

/** `DELETE /suppressions`: the removal of one suppression (the next claims may send again). */
const removeRoute = adminRoute({
  method: 'DELETE', path: '/suppressions',
  json: { schema: suppressionRemoveSchema, name: 'SuppressionRemove' },
  doc: {
    summary: 'Remove a suppression: the next claims may send again; nothing it stopped is sent again',
    responses: { '200': jsonAnswer(changed('removed'), 'Removed (removed: false when there was none)'), ...changing },
  },
  handle: async (deps, { body, who }) => {
    const { admin } = need(deps);
    const by = `dashboard:${who}`;
    const removed = await checked(() => admin.remove(body, by));
    deps.logger.info({ event: 'suppression_removed', by, channel: body.channel, category: body.category, removed }, 'operator suppression removal');
    return { body: { removed, by, recipient: await admin.get(body.recipient) } };
  },
});

/**
 * The suppression list (docs/feedback.md "Suppression list"). The two changes
 * sit behind the admin API's authentication and origin guard; the claim reads
 * what they wrote, so the answer means no claim after it sends to that
 * recipient (or, for a removal, that the next one may).
 */
export const SUPPRESSION_ROUTES: readonly AdminRoute[] = tagged('suppressions', [listRoute, auditRoute, recipientRoute, addRoute, removeRoute]);
