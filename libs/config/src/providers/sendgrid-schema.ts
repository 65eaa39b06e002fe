import { z } from 'zod';
import { httpUrl, identifier, nonEmpty, positiveInt } from '../primitives';

/** `type: sendgrid`: the v3 Mail Send API (`POST /v3/mail/send`). */
export const sendgridProviderSchema = z.strictObject({
  type: z.literal('sendgrid'),
  name: identifier,
  /** API key with the "Mail Send" permission (or `apiKeyFile`). */
  apiKey: z.string().optional(),
  apiKeyFile: nonEmpty.optional(),
  /** A verified sender: `addr@domain`. */
  from: z.email(),
  fromName: nonEmpty.optional(),
  /** API base; `https://api.eu.sendgrid.com` for EU regional subusers, a test server in tests. */
  endpoint: httpUrl.default('https://api.sendgrid.com'),
  timeoutMs: positiveInt.default(10_000),
}).superRefine((p, ctx) => {
  if (p.apiKey === undefined) ctx.addIssue({ code: 'custom', path: ['apiKey'], message: 'required: give apiKey or apiKeyFile' });
});

export type SendgridProviderConfig = z.output<typeof sendgridProviderSchema>;
