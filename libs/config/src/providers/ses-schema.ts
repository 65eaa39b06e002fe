import { z } from 'zod';
import { httpUrl, identifier, mailboxAddress, nonEmpty, positiveInt } from '../primitives';

/**
 * `type: ses`: Amazon SES v2 `SendEmail`. Region, endpoint and credentials
 * fall back to the AWS SDK's standard chain (AWS_REGION, AWS_ACCESS_KEY_ID…,
 * shared config files, instance/container roles) when not given here.
 */
export const sesProviderSchema = z.strictObject({
  type: z.literal('ses'),
  name: identifier,
  /** e.g. `eu-west-1`; default: the AWS chain (`AWS_REGION`, `~/.aws/config`). */
  region: nonEmpty.optional(),
  /** Endpoint override (VPC endpoint, LocalStack, a test server); default: the region's public endpoint. */
  endpoint: httpUrl.optional(),
  /** Static credentials; without them the AWS default credential chain applies. */
  credentials: z
    .strictObject({
      accessKeyId: nonEmpty,
      secretAccessKey: z.string().optional(),
      secretAccessKeyFile: nonEmpty.optional(),
      sessionToken: z.string().optional(),
    })
    .superRefine((c, ctx) => {
      if (c.secretAccessKey === undefined) ctx.addIssue({ code: 'custom', path: ['secretAccessKey'], message: 'required: give secretAccessKey or secretAccessKeyFile' });
    })
    .optional(),
  /** A verified identity: `addr@domain` or `"Name" <addr@domain>`. */
  from: mailboxAddress,
  /** SES configuration set (event publishing is how SES sends can be looked up later). */
  configurationSetName: nonEmpty.optional(),
  timeoutMs: positiveInt.default(10_000),
});

export type SesProviderConfig = z.output<typeof sesProviderSchema>;
