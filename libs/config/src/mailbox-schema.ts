import { z } from 'zod';
import { identifier, nonEmpty, positiveInt, remotePort } from './primitives';

/** IMAP polling for one mailbox. */
export const imapSchema = z
  .strictObject({
    host: nonEmpty,
    port: remotePort.default(993),
    /** Implicit TLS (993). `false` for a plain or STARTTLS server (e.g. a local test server on 10143). */
    secure: z.boolean().default(true),
    user: nonEmpty,
    password: z.string().optional(),
    passwordFile: nonEmpty.optional(),
    folder: nonEmpty.default('INBOX'),
    pollIntervalMs: positiveInt.default(60_000),
    /** Larger mails are still recorded (truncated, with a note), never silently skipped. */
    maxMessageBytes: positiveInt.default(26_214_400),
    /** Use IMAP IDLE when the server supports it; polling continues as the safety net. */
    idle: z.boolean().default(true),
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
  id: identifier,
  /** Who `recipients: owner` notifies. */
  owner: z.email(),
  imap: imapSchema.optional(),
});

export type ImapConfig = z.output<typeof imapSchema>;
export type MailboxConfig = z.output<typeof mailboxSchema>;
