import { z } from 'zod';
import { httpUrl, identifier, mailboxAddress, nonEmpty, positiveInt } from '../primitives';

/**
 * `type: ses`: Amazon SES v2 `SendEmail`. Region, endpoint and credentials
 * fall back to the AWS SDK's standard chain (AWS_REGION, AWS_ACCESS_KEY_ID…,
 * shared config files, instance/container roles) when not given here.
 */
export const sesProviderSchema = z.strictObject({
  type: z.literal('ses').describe('Amazon SES v2 `SendEmail`; `MessageId` is the external id.'),
  name: identifier.describe('Unique within the channel; a metric label.'),
  region: nonEmpty.optional().describe('e.g. `eu-west-1`; default: the AWS chain (`AWS_REGION`, `~/.aws/config`).'),
  endpoint: httpUrl.optional().describe("Endpoint override (VPC endpoint, LocalStack); default: the region's public endpoint."),
  credentials: z
    .strictObject({
      accessKeyId: nonEmpty.describe('Access key id.'),
      secretAccessKey: z.string().optional().describe('Its secret (or `secretAccessKeyFile`).'),
      secretAccessKeyFile: nonEmpty.optional().describe('A file holding the secret.'),
      sessionToken: z.string().optional().describe('Session token of temporary credentials.'),
    })
    .superRefine((c, ctx) => {
      if (c.secretAccessKey === undefined) ctx.addIssue({ code: 'custom', path: ['secretAccessKey'], message: 'required: give secretAccessKey or secretAccessKeyFile' });
    })
    .optional()
    .describe('Static credentials; without them the AWS default credential chain applies.'),
  from: mailboxAddress.describe('A verified identity: `addr@domain` or `"Name" <addr@domain>`.'),
  configurationSetName: nonEmpty
    .optional()
    .describe('SES configuration set; its event destination carries the `singleshot-operation` tag, which is how a send can be found later.'),
  timeoutMs: positiveInt.default(10_000).describe('Upper bound of one call.'),
}).describe('SES takes no idempotency key and has no message lookup: an in-doubt send stays on SES and follows `delivery.inDoubtPolicy`.');

export type SesProviderConfig = z.output<typeof sesProviderSchema>;
