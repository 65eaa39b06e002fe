import { z } from 'zod';
import { httpUrl, nonEmpty, positiveInt } from './primitives';

/**
 * One-click unsubscribe (RFC 8058, docs/preferences.md): email of a route
 * with a `category` carries a signed `List-Unsubscribe` URL to ingest's
 * `POST /v1/unsubscribe/<token>`. Without `publicBaseUrl` no header is added:
 * a link that recipients cannot reach would be worse than none.
 */
export const unsubscribeSchema = z.strictObject({
  publicBaseUrl: httpUrl
    .optional()
    .describe('Where recipients reach ingest (`https://notify.example.com`); the URL is `<publicBaseUrl>/v1/unsubscribe/<token>`. Absent: no `List-Unsubscribe` header is added.'),
  mailto: z
    .email()
    .optional()
    .describe('An address also listed in `List-Unsubscribe` (`<mailto:…>`), for mail clients that do not do the one-click POST; mail to it is yours to handle.'),
  secret: z
    .string()
    .min(16, 'at least 16 characters')
    .optional()
    .describe('HMAC key of the unsubscribe tokens (or `secretFile`); none = one generated and kept in Redis, shared by every process.'),
  secretFile: nonEmpty.optional().describe('A file holding the token secret.'),
  ttlDays: positiveInt.max(3650).default(90).describe('How long an unsubscribe link stays valid after the mail is sent.'),
});

export type UnsubscribeConfig = z.output<typeof unsubscribeSchema>;
