import { z } from 'zod';
import { httpUrl, identifier, mailboxAddress, nonEmpty, positiveInt, remotePort } from './primitives';
import { sendgridProviderSchema } from './providers/sendgrid-schema';
import { sesProviderSchema } from './providers/ses-schema';
import { slackProviderSchema } from './providers/slack-schema';
import { twilioSmsProviderSchema } from './providers/twilio-schema';
import { twilioWhatsappProviderSchema } from './providers/twilio-whatsapp-schema';

/**
 * Providers per channel: an ordered fallback list. Delivery tries them in
 * order, and moves to the next one only when the previous certainly did not
 * take the message (docs/protocol.md invariant 5).
 */

/** docs/contract.md "Outbound HTTP provider". */
export const httpProviderSchema = z
  .strictObject({
    type: z.literal('http').describe('An HTTP endpoint that honours `Idempotency-Key` (see contract.md).'),
    name: identifier.describe('Unique within the channel; a metric label.'),
    url: httpUrl.describe('`POST` target of each notification.'),
    lookupUrl: httpUrl
      .optional()
      .describe("`GET <lookupUrl>/<operation key>` reconciles in-doubt sends; without it the channel's `delivery.inDoubtPolicy` applies."),
    timeoutMs: positiveInt.default(10_000).describe('Upper bound of one call (connect included), whatever the lease would allow.'),
    headers: z
      .record(z.string().min(1), z.string())
      .optional()
      .meta({ description: 'Extra request headers (e.g. an API key); values are redacted in logs.', keyName: 'header' }),
  })
  .describe('The documented HTTP contract: `Idempotency-Key` and a lookup URL make every send exactly once.');

export const smtpProviderSchema = z
  .strictObject({
    type: z.literal('smtp').describe('An SMTP relay.'),
    name: identifier.describe('Unique within the channel; a metric label.'),
    host: nonEmpty.describe('Relay host.'),
    port: remotePort.default(587).describe('Relay port.'),
    secure: z.boolean().default(false).describe('Implicit TLS (port 465). `false` still upgrades with STARTTLS when offered.'),
    user: nonEmpty.optional().describe('Login user.'),
    password: z.string().optional().describe('Login password (or `passwordFile`).'),
    passwordFile: nonEmpty.optional().describe('A file holding the password.'),
    from: mailboxAddress.describe('Header From and envelope sender: `addr@domain` or `"Name" <addr@domain>`.'),
    messageIdDomain: nonEmpty
      .optional()
      .describe('Domain of the `Message-ID: <operation key@domain>` header, so a resent copy carries the same id. Default: the domain of `from`.'),
    timeoutMs: positiveInt.default(30_000).describe('Upper bound of one SMTP call (connect to the final reply), whatever the lease would allow.'),
    requireTls: z
      .boolean()
      .default(false)
      .describe('Fail (to the DLQ) rather than send in clear text when a non-`secure` server does not offer STARTTLS.'),
  })
  .describe('SMTP cannot be asked whether it took a message: an in-doubt send follows `delivery.inDoubtPolicy`, and a resent copy carries the same `Message-ID`.');

/** Appends one JSON line per notification to a file: the embedded default, and handy in tests. */
export const logProviderSchema = z
  .strictObject({
    type: z.literal('log').describe('Appends to a file.'),
    name: identifier.describe('Unique within the channel; a metric label.'),
    path: nonEmpty.default('./.singleshot/notifications.ndjson').describe('The file notifications are appended to, one JSON line each.'),
  })
  .describe('One JSON line per notification in a file: the embedded default, and handy in tests.');

export const providerSchema = z.discriminatedUnion('type', [
  httpProviderSchema,
  smtpProviderSchema,
  logProviderSchema,
  sesProviderSchema,
  sendgridProviderSchema,
  twilioSmsProviderSchema,
  twilioWhatsappProviderSchema,
  slackProviderSchema,
]);

/** Channel name → ordered, non-empty fallback list. Provider names are unique within a channel. */
export const providersSchema = z
  .record(identifier, z.array(providerSchema).min(1, 'needs at least one provider'))
  .meta({ keyName: 'channel' });

export type HttpProviderConfig = z.output<typeof httpProviderSchema>;
export type SmtpProviderConfig = z.output<typeof smtpProviderSchema>;
export type LogProviderConfig = z.output<typeof logProviderSchema>;
export type ProviderConfig = z.output<typeof providerSchema>;
/** A provider entry as written (defaults optional): what `createProvider` accepts. */
export type ProviderInput = z.input<typeof providerSchema>;
export type ProviderType = ProviderConfig['type'];
