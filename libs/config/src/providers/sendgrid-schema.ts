import { z } from 'zod';
import { httpUrl, identifier, nonEmpty, positiveInt } from '../primitives';

/** `type: sendgrid`: the v3 Mail Send API (`POST /v3/mail/send`). */
export const sendgridProviderSchema = z.strictObject({
  type: z.literal('sendgrid').describe('SendGrid v3 Mail Send; `X-Message-Id` is the external id.'),
  name: identifier.describe('Unique within the channel; a metric label.'),
  apiKey: z.string().optional().describe('API key with the "Mail Send" permission (or `apiKeyFile`).'),
  apiKeyFile: nonEmpty.optional().describe('A file holding the API key.'),
  from: z.email().describe('A verified sender: `addr@domain`.'),
  fromName: nonEmpty.optional().describe('Display name of the sender.'),
  endpoint: httpUrl.default('https://api.sendgrid.com').describe('API base; `https://api.eu.sendgrid.com` for EU regional subusers.'),
  timeoutMs: positiveInt.default(10_000).describe('Upper bound of one call.'),
}).superRefine((p, ctx) => {
  if (p.apiKey === undefined) ctx.addIssue({ code: 'custom', path: ['apiKey'], message: 'required: give apiKey or apiKeyFile' });
}).describe('SendGrid takes no idempotency key and cannot be asked in time: an in-doubt send follows `delivery.inDoubtPolicy`.');

export type SendgridProviderConfig = z.output<typeof sendgridProviderSchema>;
