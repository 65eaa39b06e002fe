import { z } from 'zod';
import { TENANT_ID } from '@singleshot/core';

/**
 * Small schema building blocks shared by the config sections. Every object is
 * strict: an unknown key is an error, because a typo (`pasword`, `leaseMS`)
 * silently falling back to a default is the worst kind of misconfiguration.
 */

/** A TCP port to listen on; `0` asks the OS for a free one (logged at start). */
export const listenPort = z.int().min(0).max(65535);

/** A TCP port to connect to. */
export const remotePort = z.int().min(1).max(65535);

export const positiveInt = z.int().min(1);

export const nonNegativeInt = z.int().min(0);

export const nonEmpty = z.string().min(1, 'must not be empty');

/** A sender: `addr@domain` or `"Name" <addr@domain>` (the provider parses it once more). */
export const mailboxAddress = z
  .string()
  .regex(/^(?:[^<>@\s]+@[^<>@\s]+\.[^<>@\s]+|[^<>]*<[^<>@\s]+@[^<>@\s]+\.[^<>@\s]+>\s*)$/, 'must be addr@domain or "Name" <addr@domain>');

/** An `http://` or `https://` URL. */
export const httpUrl = z.url({ protocol: /^https?$/, error: 'Invalid URL' });

/** Ids that end up inside Redis keys and operation keys: no `:`, spaces or braces. */
export const identifier = z
  .string()
  .regex(/^[A-Za-z0-9_.-]+$/, 'may contain only letters, digits, "_", "." and "-"');

/** A tenant id (docs/tenants.md): lower-case letters, digits, `_` and `-`, at most 64. */
export const tenantId = z.string().regex(TENANT_ID, 'expected a tenant id: lower-case letters, digits, _ and -, at most 64');

/** A JavaScript regular expression source; compiled here so a bad one fails at start, not per message. */
export const regexSource = z.string().superRefine((source, ctx) => {
  try {
    new RegExp(source);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `invalid regular expression: ${(err as Error).message}` });
  }
});

/** `{ max, windowSeconds }`: at most `max` notifications per sliding window. */
export const rateLimitSchema = z.strictObject({
  max: positiveInt.describe('Notifications allowed per window.'),
  windowSeconds: positiveInt.describe('Length of the sliding window.'),
});
export type RateLimitConfig = z.output<typeof rateLimitSchema>;

const DURATION_UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration as `30s`, `15m`, `72h` or `2d`, parsed to milliseconds. */
export const durationMs = z
  .string()
  .regex(/^[0-9]{1,7}[smhd]$/, 'expected a duration such as 30s, 15m, 72h or 2d')
  .transform((text) => Number(text.slice(0, -1)) * (DURATION_UNITS[text.slice(-1)] as number));
