import { z } from 'zod';
import { httpUrl, identifier, mailboxAddress, nonEmpty, positiveInt, remotePort } from './primitives';
import { sendgridProviderSchema } from './providers/sendgrid-schema';
import { sesProviderSchema } from './providers/ses-schema';
import { slackProviderSchema } from './providers/slack-schema';
import { twilioSmsProviderSchema } from './providers/twilio-schema';

/**
 * Providers per channel: an ordered fallback list. Delivery tries them in
 * order, and moves to the next one only when the previous certainly did not
 * take the message (docs/protocol.md invariant 5).
 */

/** docs/contract.md "Outbound HTTP provider". */
export const httpProviderSchema = z.strictObject({
  type: z.literal('http'),
  name: identifier,
  url: httpUrl,
  /** `GET <lookupUrl>/<operation key>` reconciles in-doubt sends; without it the channel's `inDoubtPolicy` applies. */
  lookupUrl: httpUrl.optional(),
  /** Upper bound of one call (connect included), whatever the lease would allow. */
  timeoutMs: positiveInt.default(10_000),
  /** Extra request headers (e.g. an API key); values are redacted in logs. */
  headers: z.record(z.string().min(1), z.string()).optional(),
});

export const smtpProviderSchema = z.strictObject({
  type: z.literal('smtp'),
  name: identifier,
  host: nonEmpty,
  port: remotePort.default(587),
  /** Implicit TLS (port 465). `false` still upgrades with STARTTLS when offered. */
  secure: z.boolean().default(false),
  user: nonEmpty.optional(),
  password: z.string().optional(),
  passwordFile: nonEmpty.optional(),
  /** Header From and envelope sender: `addr@domain` or `"Name" <addr@domain>`. */
  from: mailboxAddress,
  /**
   * Domain of the `Message-ID: <operation key@domain>` header, so a resent copy
   * carries the same id. Defaults to the domain of `from`.
   */
  messageIdDomain: nonEmpty.optional(),
  /** Upper bound of one SMTP call (connect to the final reply), whatever the lease would allow. */
  timeoutMs: positiveInt.default(30_000),
  /** Fail (permanently) rather than send in clear text when a non-`secure` server does not offer STARTTLS. */
  requireTls: z.boolean().default(false),
});

/** Appends one JSON line per notification to a file: the embedded default, and handy in tests. */
export const logProviderSchema = z.strictObject({
  type: z.literal('log'),
  name: identifier,
  path: nonEmpty.default('./.singleshot/notifications.ndjson'),
});

export const providerSchema = z.discriminatedUnion('type', [
  httpProviderSchema,
  smtpProviderSchema,
  logProviderSchema,
  sesProviderSchema,
  sendgridProviderSchema,
  twilioSmsProviderSchema,
  slackProviderSchema,
]);

/** Channel name → ordered, non-empty fallback list. Provider names are unique within a channel. */
export const providersSchema = z.record(identifier, z.array(providerSchema).min(1, 'needs at least one provider'));

export type HttpProviderConfig = z.output<typeof httpProviderSchema>;
export type SmtpProviderConfig = z.output<typeof smtpProviderSchema>;
export type LogProviderConfig = z.output<typeof logProviderSchema>;
export type ProviderConfig = z.output<typeof providerSchema>;
/** A provider entry as written (defaults optional): what `createProvider` accepts. */
export type ProviderInput = z.input<typeof providerSchema>;
export type ProviderType = ProviderConfig['type'];
