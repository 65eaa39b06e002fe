import { z } from 'zod';
import { identifier, nonEmpty, positiveInt, remotePort } from './primitives';

/**
 * Providers per channel: an ordered fallback list. Delivery tries them in
 * order, and moves to the next one only when the previous certainly did not
 * take the message (docs/protocol.md invariant 5).
 */

const httpUrl = z.url({ protocol: /^https?$/, error: 'Invalid URL' });

/** docs/contract.md "Outbound HTTP provider". */
export const httpProviderSchema = z.strictObject({
  type: z.literal('http'),
  name: identifier,
  url: httpUrl,
  /** `GET <lookupUrl>/<operation key>` reconciles in-doubt sends; without it the channel's `inDoubtPolicy` applies. */
  lookupUrl: httpUrl.optional(),
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
  from: z.email(),
  /**
   * Domain of the `Message-ID: <operation key@domain>` header, so a resent copy
   * carries the same id. Defaults to the domain of `from`.
   */
  messageIdDomain: nonEmpty.optional(),
  timeoutMs: positiveInt.default(30_000),
});

/** Appends one JSON line per notification to a file: the embedded default, and handy in tests. */
export const logProviderSchema = z.strictObject({
  type: z.literal('log'),
  name: identifier,
  path: nonEmpty.default('./.singleshot/notifications.ndjson'),
});

export const providerSchema = z.discriminatedUnion('type', [httpProviderSchema, smtpProviderSchema, logProviderSchema]);

/** Channel name → ordered, non-empty fallback list. Provider names are unique within a channel. */
export const providersSchema = z.record(identifier, z.array(providerSchema).min(1, 'needs at least one provider'));

export type HttpProviderConfig = z.output<typeof httpProviderSchema>;
export type SmtpProviderConfig = z.output<typeof smtpProviderSchema>;
export type LogProviderConfig = z.output<typeof logProviderSchema>;
export type ProviderConfig = z.output<typeof providerSchema>;
export type ProviderType = ProviderConfig['type'];
