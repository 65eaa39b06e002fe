/**
 * One pass over one folder: find the messages past the cursor, hand each over
 * in UID order, move the cursor after each hand-over resolved.
 *
 * Read-only by construction: the folder is opened with EXAMINE and bodies are
 * fetched with BODY.PEEK (imapflow's `source` and `headers` queries), so
 * polling never sets `\Seen` or clears `\Recent`. Flags are not even fetched:
 * whether someone read a mail says nothing about whether we handled it.
 */
import type { FetchMessageObject, ImapFlow } from 'imapflow';
import { describeError } from '@singleshot/core';
import type { HandOverMeta, ImapSourceDeps, PollResult } from './types';

export interface PollFolderOptions {
  mailboxId: string;
  folder: string;
  maxMessageBytes: number;
  batchMessages: number;
  batchBytes: number;
  now?: () => number;
  /** Checked before each hand-over: a stopping source ends the pass early, cursor intact. */
  isStopping?: () => boolean;
}

interface Listed {
  uid: number;
  size: number;
  internalDate?: Date;
}

function isoDate(value: Date | string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** Splits the listing into FETCH batches bounded by count and bytes (an over-cap message travels alone). */
export function planBatches(listed: readonly Listed[], opts: Pick<PollFolderOptions, 'maxMessageBytes' | 'batchMessages' | 'batchBytes'>): Listed[][] {
  const batches: Listed[][] = [];
  let current: Listed[] = [];
  let bytes = 0;
  for (const entry of listed) {
    const oversize = entry.size > opts.maxMessageBytes;
    const full = current.length >= opts.batchMessages || (current.length > 0 && bytes + entry.size > opts.batchBytes);
    if (current.length > 0 && (oversize || full)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    if (oversize) {
      batches.push([entry]);
      continue;
    }
    current.push(entry);
    bytes += entry.size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

async function listNew(client: ImapFlow, lastUid: number): Promise<Listed[]> {
  const listed: Listed[] = [];
  // `N:*` always matches the highest UID, even below N (RFC 3501 6.4.8), so
  // an up-to-date folder answers with its last message: filter by UID.
  for await (const msg of client.fetch(`${lastUid + 1}:*`, { uid: true, size: true, internalDate: true }, { uid: true })) {
    if (msg.uid > lastUid) listed.push({ uid: msg.uid, size: msg.size ?? 0, internalDate: isoDate(msg.internalDate) });
  }
  return listed.sort((a, b) => a.uid - b.uid);
}

/**
 * `block` with the Message-ID lines of `fields` (a HEADER.FIELDS answer) put
 * first: the first Message-ID is the mail's identity, and parsing takes the
 * first value of a header.
 */
function withMessageIdFirst(fields: Buffer | undefined, block: Buffer): Buffer {
  if (!fields) return block;
  let end = fields.length;
  while (end > 0 && (fields[end - 1] === 0x0a || fields[end - 1] === 0x0d)) end--;
  return end === 0 ? block : Buffer.concat([fields.subarray(0, end), Buffer.from('\r\n'), block]);
}

async function fetchBatch(client: ImapFlow, batch: Listed[], maxMessageBytes: number): Promise<Map<number, FetchMessageObject>> {
  const uids = batch.map((m) => m.uid).join(',');
  const oversize = batch.length === 1 && (batch[0] as Listed).size > maxMessageBytes;
  const query = oversize
    ? // BODY.PEEK[HEADER]<0.cap>: the header block, itself bounded by the cap.
      { uid: true, bodyParts: [{ key: 'header', maxLength: maxMessageBytes }] }
    : { uid: true, source: true };
  const rows = await client.fetchAll(uids, query, { uid: true });
  const row = rows[0];
  if (oversize && row?.headers && row.headers.length >= maxMessageBytes) {
    // The header block itself was cut at the cap, so the Message-ID may lie
    // past it (spam padding a header to 10 MB does exactly that): the key would
    // fall back to a fingerprint, unlike the key every other path computes
    // from the whole mail, and the owner would be notified twice. Fetch the
    // field on its own (HEADER.FIELDS: whole lines, as sent) and put it first.
    const ids = await client.fetchAll(uids, { uid: true, headers: ['message-id'] }, { uid: true });
    row.headers = withMessageIdFirst(ids[0]?.headers, row.headers);
  }
  return new Map(rows.map((r) => [r.uid, r]));
}

/**
 * Polls `folder` once on a connected client. Throws on IMAP errors (the
 * caller reconnects); a hand-over failure does not throw: it ends the pass
 * with `pending > 0` and the cursor on the last acknowledged UID.
 */
export async function pollFolder(client: ImapFlow, opts: PollFolderOptions, deps: ImapSourceDeps): Promise<PollResult> {
  const { mailboxId, folder } = opts;
  const now = opts.now ?? Date.now;
  const box = await client.mailboxOpen(folder, { readOnly: true });
  const uidValidity = String(box.uidValidity);

  let cursor = await deps.cursor.get(mailboxId, folder);
  let rescanned = false;
  if (!cursor || cursor.uidValidity !== uidValidity) {
    rescanned = true;
    if (cursor) {
      deps.logger.warn(
        { event: 'imap_uidvalidity_changed', mailboxId, folder, previousUidValidity: cursor.uidValidity, uidValidity, previousLastUid: cursor.lastUid },
        'UIDVALIDITY changed: rescanning the folder from UID 1 (message keys prevent a second notification)',
      );
    } else {
      deps.logger.info({ event: 'imap_cursor_missing', mailboxId, folder, uidValidity }, 'no IMAP cursor yet: reading the folder from UID 1');
    }
    await deps.cursor.advance(mailboxId, folder, uidValidity, 0);
    cursor = { uidValidity, lastUid: 0 };
  }

  const result: PollResult = { mailboxId, folder, uidValidity, handedOver: 0, truncated: 0, lastUid: cursor.lastUid, rescanned, pending: 0 };
  const report = (oldestPending?: Date) =>
    deps.onLag?.(mailboxId, oldestPending ? Math.max(0, (now() - oldestPending.getTime()) / 1000) : 0);

  // UIDNEXT is above every UID in the folder: nothing new when the cursor
  // already reached UIDNEXT-1. Saves the FETCH on every warm poll.
  if (box.exists === 0 || (Number.isSafeInteger(box.uidNext) && box.uidNext <= cursor.lastUid + 1)) {
    report();
    return result;
  }

  const listed = await listNew(client, cursor.lastUid);
  for (const batch of planBatches(listed, opts)) {
    const rows = await fetchBatch(client, batch, opts.maxMessageBytes);
    for (const entry of batch) {
      const row = rows.get(entry.uid);
      const meta: HandOverMeta = { mailboxId, folder, uid: entry.uid, uidValidity, truncated: false, sizeBytes: entry.size };
      if (entry.internalDate) meta.internalDate = entry.internalDate.toISOString();
      let raw: Buffer | undefined;
      if (entry.size > opts.maxMessageBytes) {
        raw = row?.headers;
        meta.truncated = true;
        meta.note = `message is ${entry.size} bytes, over maxMessageBytes ${opts.maxMessageBytes}: handed over its header block only`;
      } else {
        raw = row?.source;
      }
      if (!raw) {
        // Expunged between the listing and the FETCH: there is nothing left
        // to hand over. Later UIDs move the cursor past it.
        deps.logger.info({ event: 'imap_message_vanished', mailboxId, folder, uid: entry.uid }, 'message vanished before it could be fetched');
        continue;
      }
      if (opts.isStopping?.()) {
        result.pending = listed.length - listed.indexOf(entry);
        report(entry.internalDate);
        return result;
      }
      try {
        await deps.handOver(raw, meta);
      } catch (err) {
        const index = listed.indexOf(entry);
        result.pending = listed.length - index;
        result.error = describeError(err);
        deps.logger.warn(
          { event: 'imap_handover_failed', mailboxId, folder, uid: entry.uid, uidValidity, err: result.error, pending: result.pending },
          'hand-over failed: stopping this poll; the message is retried next poll',
        );
        report(listed[index]?.internalDate);
        return result;
      }
      // Ack after effect: the decide job exists, now the cursor may pass it.
      await deps.cursor.advance(mailboxId, folder, uidValidity, entry.uid);
      result.handedOver++;
      if (meta.truncated) result.truncated++;
      result.lastUid = entry.uid;
    }
  }
  report();
  return result;
}
