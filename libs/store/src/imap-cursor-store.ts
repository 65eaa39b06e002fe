import type { RedisClient } from './connection';
import type { KeyBuilder } from './keys';
import { decimal } from './script-options';
import { runScript } from './scripts';

/**
 * Where an IMAP folder was read up to: the highest UID handed over, valid only
 * together with the folder's UIDVALIDITY. A cursor, never an identity: the same
 * mail gets a new UID when it is copied or moved (identity is the message key).
 */
export interface ImapCursor {
  /** UIDVALIDITY as a decimal string (32-bit unsigned; kept exact). */
  uidValidity: string;
  /** Highest UID handed over under that UIDVALIDITY; 0 = none yet. */
  lastUid: number;
}

export type CursorAdvanceOutcome = 'advanced' | 'unchanged' | 'reset';

export interface CursorAdvanceResult {
  outcome: CursorAdvanceOutcome;
  /** The cursor as stored after the call. */
  cursor: ImapCursor;
}

/**
 * IMAP cursors in Redis, one hash per mailbox and folder
 * (`KeyBuilder.imapCursor`). No expiry: a cursor is the only record of how far
 * a folder was read, and losing it only costs a rescan (the message keys keep
 * a rescan from notifying twice), never a lost mail.
 */
export class ImapCursorStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeyBuilder,
    private readonly options: { now?: () => number } = {},
  ) {}

  /** The stored cursor, or null when the folder was never read. */
  async get(mailboxId: string, folder: string): Promise<ImapCursor | null> {
    const [uidValidity, lastUid] = await this.redis.hmget(this.keys.imapCursor(mailboxId, folder), 'uidValidity', 'lastUid');
    if (uidValidity == null) return null;
    return { uidValidity, lastUid: Number(lastUid ?? 0) };
  }

  /**
   * Records that `uid` was handed over. Atomic (one Lua script): moves only
   * forward under the same UIDVALIDITY, and replaces the cursor when the
   * UIDVALIDITY differs. `uid = 0` records a new UIDVALIDITY before any of its
   * mails was handed over (the start of a rescan).
   */
  async advance(mailboxId: string, folder: string, uidValidity: string | bigint | number, uid: number): Promise<CursorAdvanceResult> {
    const validity = String(uidValidity);
    if (!/^[0-9]{1,20}$/.test(validity)) throw new TypeError(`invalid UIDVALIDITY "${validity}"`);
    if (!Number.isSafeInteger(uid) || uid < 0) throw new TypeError(`invalid UID ${uid}`);
    const [outcome, storedValidity, lastUid] = (await runScript(
      this.redis,
      'imap-cursor-advance',
      [this.keys.imapCursor(mailboxId, folder)],
      { uidValidity: validity, uid, now: decimal((this.options.now ?? Date.now)()) },
    )) as [CursorAdvanceOutcome, string, number];
    return { outcome, cursor: { uidValidity: String(storedValidity), lastUid: Number(lastUid) } };
  }

  /** Forgets the cursor: the next poll reads the folder from UID 1 again. */
  async reset(mailboxId: string, folder: string): Promise<void> {
    await this.redis.del(this.keys.imapCursor(mailboxId, folder));
  }
}
