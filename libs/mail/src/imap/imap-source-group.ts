import { ImapSource } from './imap-source';
import type { ImapSourceDeps, ImapSourceOptions, PollResult } from './types';

/**
 * Several mailboxes at once: one `ImapSource` (one connection) each, so a slow
 * or unreachable server delays only its own mailbox. The sources share the
 * deps; each logs with its own `mailboxId`.
 */
export class ImapSourceGroup {
  readonly sources: ImapSource[];

  constructor(mailboxes: readonly ImapSourceOptions[], deps: ImapSourceDeps) {
    const seen = new Set<string>();
    for (const m of mailboxes) {
      const key = `${m.mailboxId}\u0000${m.folder ?? 'INBOX'}`;
      // Two sources on one folder would race each other's cursor for nothing.
      if (seen.has(key)) throw new TypeError(`mailbox ${m.mailboxId} folder ${m.folder ?? 'INBOX'} is configured twice`);
      seen.add(key);
    }
    this.sources = mailboxes.map((m) => new ImapSource(m, deps));
  }

  async start(): Promise<void> {
    await Promise.all(this.sources.map((s) => s.start()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.sources.map((s) => s.stop()));
  }

  /** Polls every source once; one failing mailbox does not hide the others' results. */
  pollAll(): Promise<PromiseSettledResult<PollResult>[]> {
    return Promise.allSettled(this.sources.map((s) => s.pollOnce()));
  }

  get(mailboxId: string): ImapSource | undefined {
    return this.sources.find((s) => s.mailboxId === mailboxId);
  }
}
