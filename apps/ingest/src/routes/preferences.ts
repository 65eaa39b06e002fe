import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { normalizeRecipient } from '@singleshot/core';
import { errorResponse, retryAfterHeader, type Logger } from '@singleshot/observability';
import { sendError, sendJson } from '@singleshot/http';
import type { OptOut, Suppressions } from '@singleshot/store';
import { jsonRoute, rawRoute, type IngestRoute } from '../http/route';
import { intakeErrors } from '../openapi-parts';
import { refuseTenantKey } from '../producer-auth';

/** What the preferences routes need. */
export interface PreferencesDeps {
  suppressions: Pick<Suppressions, 'get' | 'setOptOuts'>;
  logger: Logger;
  maxBodyBytes: number;
  maxJsonDepth: number;
}

// Channel and category names are route identifiers (libs/config primitives): the same characters here.
const name = z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/, 'may contain only letters, digits, "_", "." and "-" (1 to 100)');

/** `PUT /v1/preferences/{recipient}`: the recipient's whole list of opt-outs. */
export const preferencesBodySchema = z.strictObject({
  optOuts: z
    .array(
      z
        .strictObject({
          channel: name.optional().describe('The channel (absent: every channel).'),
          category: name.optional().describe('The route category (absent: every category).'),
        })
        .describe('Out of `category` on `channel`; `{}` is out of everything but required routes.'),
    )
    .max(100)
    .describe('Replaces every opt-out of the recipient; `[]` clears them.'),
});

export type PreferencesBody = z.output<typeof preferencesBodySchema>;

/** The answer of both routes. */
const preferencesSchema = {
  type: 'object',
  required: ['recipient', 'optOuts', 'version'],
  properties: {
    recipient: { type: 'string', description: 'As normalized (addresses lower-cased)' },
    optOuts: { type: 'array', items: { type: 'object', properties: { channel: { type: 'string' }, category: { type: 'string' } } } },
    version: { type: 'integer', description: 'Changes with every write of the opt-outs (0 before the first)' },
  },
};
// A producer key's `sources` do not bound preferences; its tenant does.
const { '403': _sourceNotAllowed, ...intakeAuthErrors } = intakeErrors;
const authErrors = { ...intakeAuthErrors, '403': errorResponse('`TENANT_NOT_ALLOWED`: the key is bound to a tenant, and preferences are kept for every tenant') };
const answer = { description: 'The recipient\'s opt-outs', content: { 'application/json': { schema: preferencesSchema } } };
const recipientParameter = { name: 'recipient', in: 'path', required: true, schema: { type: 'string', minLength: 1, maxLength: 512 }, description: 'An address, phone number or id (percent-encoded)' };
// Controls would let a recipient forge a log line or a key: refused like the decision refuses them.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** The recipient of the path, normalized, or undefined when it cannot be one. */
function recipientOf(raw: string | undefined): string | undefined {
  const recipient = normalizeRecipient(raw ?? '');
  return recipient && recipient.length <= 512 && !CONTROL.test(recipient) ? recipient : undefined;
}

const sorted = (optOuts: readonly OptOut[]) => [...optOuts].map((o) => ({ ...(o.channel ? { channel: o.channel } : {}), ...(o.category ? { category: o.category } : {}) })).sort((a, b) => `${a.channel ?? '*'}|${a.category ?? '*'}`.localeCompare(`${b.channel ?? '*'}|${b.category ?? '*'}`));

function unavailable(deps: PreferencesDeps, res: ServerResponse, err: unknown): void {
  deps.logger.warn({ event: 'preferences_store_unavailable', err: { code: (err as { code?: unknown }).code, message: (err as Error).message } }, 'preferences not read or written: Redis unavailable');
  res.setHeader('retry-after', '1');
  sendError(res, 503, 'STORE_UNAVAILABLE', 'the preferences could not be read or written; retry (a PUT is idempotent)');
}

/**
 * `GET` and `PUT /v1/preferences/{recipient}` (docs/preferences.md), behind
 * producer authentication: a recipient's opt-outs by channel and category,
 * replaced wholesale by a PUT. Once the PUT has answered, no operation of an
 * opted-out category is sent to them, scheduled and waiting ones included
 * (the claim reads the opt-outs); required routes are sent regardless.
 */
export function preferencesRoutes(deps: PreferencesDeps): IngestRoute[] {
  const get = rawRoute({
    method: 'GET',
    path: '/v1/preferences/:recipient',
    gate: 'producer',
    handle: async ({ params, producer }, res) => {
      if (refuseTenantKey(producer, res, 'recipients\' preferences')) return;
      const recipient = recipientOf(params.recipient);
      if (!recipient) return sendError(res, 400, 'INVALID_PREFERENCES', 'the recipient is empty, longer than 512 characters or holds control characters');
      try {
        const record = await deps.suppressions.get(recipient);
        sendJson(res, 200, { recipient, optOuts: sorted(record.optOuts), version: record.version });
      } catch (err) {
        unavailable(deps, res, err);
      }
    },
    doc: {
      tags: ['preferences'],
      summary: 'A recipient\'s opt-outs by channel and category',
      parameters: [recipientParameter],
      responses: { '200': answer, '400': errorResponse('The recipient cannot be one (code `INVALID_PREFERENCES`)'), ...authErrors },
    },
  });
  const put = jsonRoute({
    method: 'PUT',
    path: '/v1/preferences/:recipient',
    gate: 'producer',
    bodyLimit: deps.maxBodyBytes,
    json: {
      schema: preferencesBodySchema,
      name: 'Preferences',
      maxDepth: deps.maxJsonDepth,
      invalid: { code: 'INVALID_PREFERENCES', message: 'the preferences are invalid' },
    },
    handle: async ({ params, body, producer }, res) => {
      if (refuseTenantKey(producer, res, 'recipients\' preferences')) return;
      const recipient = recipientOf(params.recipient);
      if (!recipient) return sendError(res, 400, 'INVALID_PREFERENCES', 'the recipient is empty, longer than 512 characters or holds control characters');
      const by = `producer:${producer?.name ?? 'anonymous'}`;
      try {
        const version = await deps.suppressions.setOptOuts(recipient, body.optOuts, by);
        deps.logger.info({ event: 'preferences_changed', by, optOuts: body.optOuts.length, version }, 'opt-outs replaced');
        sendJson(res, 200, { recipient, optOuts: sorted(body.optOuts), version });
      } catch (err) {
        unavailable(deps, res, err);
      }
    },
    doc: {
      tags: ['preferences'],
      summary: 'Replace a recipient\'s opt-outs; once answered, no operation they opted out of is sent (scheduled ones included)',
      parameters: [recipientParameter],
      responses: {
        '200': answer,
        '400': errorResponse('`INVALID_JSON`, `INVALID_PREFERENCES` (the body or the recipient)'),
        ...authErrors,
        '503': errorResponse('Redis did not confirm the change (code `STORE_UNAVAILABLE`); retry, a PUT is idempotent', retryAfterHeader),
      },
    },
  });
  return [get, put];
}
