import { ImapSourceGroup, parseImapMail, type ImapSourceOptions } from '@singleshot/mail';
import { ImapCursorStore } from '@singleshot/store';
import type { Metrics } from '@singleshot/observability';
import type { IngestContext, IngestRuntime } from './context';
import { acceptMail } from './mail-intake';

export interface MailboxPollers {
  group: ImapSourceGroup;
  stop(): Promise<void>;
}

/**
 * One IMAP source per configured mailbox with an `imap` section. The cursor
 * (UIDVALIDITY + highest UID handed over) lives in Redis and advances only after
 * the decide job is in Redis. Every ingest replica polls: message keys make the
 * extra copies duplicates, at the cost of some IMAP traffic.
 */
export async function startMailboxPollers(rt: IngestRuntime, ctx: IngestContext, metrics: Pick<Metrics, 'imapPollLag'>): Promise<MailboxPollers | undefined> {
  const mailboxes: ImapSourceOptions[] = [];
  for (const mailbox of rt.config.mailboxes) {
    const imap = mailbox.imap;
    if (!imap) continue;
    mailboxes.push({
      mailboxId: mailbox.id,
      host: imap.host,
      port: imap.port,
      secure: imap.secure,
      user: imap.user,
      password: imap.password ?? '',
      folder: imap.folder,
      pollIntervalMs: imap.pollIntervalMs,
      maxMessageBytes: imap.maxMessageBytes,
      idle: imap.idle,
    });
  }
  if (mailboxes.length === 0) return undefined;
  const logger = rt.logger.child({ component: 'imap' });
  const group = new ImapSourceGroup(mailboxes, {
    // The client connection: a poll waits out a short Redis restart instead of failing.
    cursor: new ImapCursorStore(rt.redis, rt.keys),
    handOver: async (raw, meta) => {
      const parsed = await parseImapMail(raw, meta);
      return acceptMail(ctx, parsed, 'imap', ctx.mailboxTenants.get(parsed.input.mailboxId));
    },
    logger,
    onLag: (mailboxId, seconds) => metrics.imapPollLag.set({ mailbox: mailboxId }, seconds),
  });
  await group.start();
  logger.info({ event: 'imap_pollers_started', mailboxes: mailboxes.map((m) => m.mailboxId) }, 'IMAP pollers started');
  return { group, stop: () => group.stop() };
}
