import { z } from 'zod';
import { identifier, nonEmpty, positiveInt, remotePort, tenantId } from './primitives';

/** IMAP polling for one mailbox. */
export const imapSchema = z
  .strictObject({
    host: nonEmpty.describe('IMAP server.'),
    port: remotePort.default(993).describe('IMAP port.'),
    secure: z
      .boolean()
      .default(true)
      .describe('Implicit TLS (993). `false` for a plain or STARTTLS server (e.g. a local test server on 10143).'),
    user: nonEmpty.describe('Login user.'),
    password: z.string().optional().describe('Login password (or `passwordFile`).'),
    passwordFile: nonEmpty.optional().describe('A file holding the password.'),
    folder: nonEmpty.default('INBOX').describe('Folder polled (opened read-only; `\\Seen` is never read or changed).'),
    pollIntervalMs: positiveInt.default(60_000).describe('Poll period; the safety net under IDLE.'),
    maxMessageBytes: positiveInt
      .default(26_214_400)
      .describe('Larger mails are still handed over (their header block, with a note), never silently skipped.'),
    idle: z.boolean().default(true).describe('Use IMAP IDLE when the server supports it; polling continues as the safety net.'),
  })
  .superRefine((imap, ctx) => {
    // passwordFile has been read into password by now (see secret-files.ts).
    if (imap.password === undefined) {
      ctx.addIssue({ code: 'custom', path: ['password'], message: 'required: give password or passwordFile' });
    }
  });

/**
 * A mailbox whose mail is routed. `imap` is optional: a mailbox may be fed only
 * by inbound webhooks (`POST /v1/mail/inbound?mailbox=<id>`).
 */
export const mailboxSchema = z.strictObject({
  id: identifier.describe('Mailbox id: the `mailbox` of routes and of `POST /v1/mail/inbound?mailbox=<id>`.'),
  owner: z.email().describe('Who `recipients: owner` (and `notify_owner`) notifies.'),
  tenant: tenantId
    .optional()
    .describe('The tenant its mail belongs to, however it arrives (docs/tenants.md); only a key of that tenant, or one without a tenant, may post to it. Unset: the default tenant, or the posting key\'s.'),
  imap: imapSchema
    .optional()
    .describe('IMAP polling of this mailbox; without it the mailbox is fed only by inbound webhooks.'),
});

export type ImapConfig = z.output<typeof imapSchema>;
export type MailboxConfig = z.output<typeof mailboxSchema>;
