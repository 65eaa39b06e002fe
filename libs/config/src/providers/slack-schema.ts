import { z } from 'zod';
import { httpUrl, identifier, nonEmpty, positiveInt } from '../primitives';

/** `type: slack`: Web API `chat.postMessage` with a bot token. */
export const slackProviderSchema = z
  .strictObject({
    type: z.literal('slack'),
    name: identifier,
    /** Bot token `xoxb-…` with `chat:write` (or `tokenFile`). */
    token: z.string().optional(),
    tokenFile: nonEmpty.optional(),
    /** Web API base; a test server in tests. */
    endpoint: httpUrl.default('https://slack.com/api'),
    /**
     * Reconcile in-doubt posts by searching the conversation's history for the
     * operation key in the message metadata. Needs the history scopes
     * (`channels:history`, `groups:history`, `im:history`, `mpim:history`) and
     * `im:write` for user-id recipients.
     */
    lookup: z.boolean().default(false),
    timeoutMs: positiveInt.default(10_000),
  })
  .superRefine((p, ctx) => {
    if (p.token === undefined) ctx.addIssue({ code: 'custom', path: ['token'], message: 'required: give token or tokenFile' });
  });

export type SlackProviderConfig = z.output<typeof slackProviderSchema>;
