import { z } from 'zod';
import { httpUrl, identifier, nonEmpty, positiveInt } from '../primitives';

/** `type: slack`: Web API `chat.postMessage` with a bot token. */
export const slackProviderSchema = z
  .strictObject({
    type: z.literal('slack').describe('Slack Web API `chat.postMessage`; `ts` is the external id.'),
    name: identifier.describe('Unique within the channel; a metric label.'),
    token: z.string().optional().describe('Bot token `xoxb-…` with `chat:write` (or `tokenFile`).'),
    tokenFile: nonEmpty.optional().describe('A file holding the token.'),
    endpoint: httpUrl.default('https://slack.com/api').describe('Web API base.'),
    lookup: z
      .boolean()
      .default(false)
      .describe("Reconcile in-doubt posts by searching the conversation's history for the operation key in the message metadata. Needs `channels:history`, `groups:history`, `im:history`, `mpim:history`, and `im:write` for user-id recipients."),
    timeoutMs: positiveInt.default(10_000).describe('Upper bound of one call.'),
  })
  .superRefine((p, ctx) => {
    if (p.token === undefined) ctx.addIssue({ code: 'custom', path: ['token'], message: 'required: give token or tokenFile' });
  })
  .describe('Recipients are conversation ids (`C…`, `G…`, `D…`) or user ids (`U…`, `W…`), checked at fan-out.');

export type SlackProviderConfig = z.output<typeof slackProviderSchema>;
