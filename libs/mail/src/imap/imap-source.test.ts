import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisClient } from '@singleshot/store';
import { mailMessageKey, RetryableError } from '@singleshot/core';
import { createRedis, ImapCursorStore, KeyBuilder } from '@singleshot/store';
import { startDovecot, type TestDovecot, startTestRedis, waitUntil, type TestRedis } from '@singleshot/test-harness';
import { parseRawMail } from '../parse-raw-mail';
import { ImapSource } from './imap-source';
import { ImapSourceGroup } from './imap-source-group';
import { parseImapMail } from './parse-imap-mail';
import type { HandOverMeta, ImapLogger, ImapSourceOptions } from './types';

let dovecot: TestDovecot;
let redisServer: TestRedis;
let redis: RedisClient;
let cursors: ImapCursorStore;

beforeAll(async () => {
  [dovecot, redisServer] = await Promise.all([startDovecot(), startTestRedis()]);
  redis = createRedis({ url: redisServer.url, role: 'client' });
  cursors = new ImapCursorStore(redis, new KeyBuilder('timap', 4));
});

afterAll(async () => {
  redis?.disconnect();
  await Promise.all([dovecot?.stop(), redisServer?.destroy()]);
});

/** A small RFC 5322 mail with CRLF line ends. */
function eml(n: string, extra: { messageId?: string | null; body?: string } = {}): Buffer {
  const id = extra.messageId === undefined ? `<${n}.imap-test@Example.Test>` : extra.messageId;
  return Buffer.from(
    [
      `From: Sender ${n} <sender-${n}@example.test>`,
      'To: support@example.test',
      `Subject: test mail ${n}`,
      'Date: Tue, 05 Mar 2024 10:00:00 +0000',
      ...(id ? [`Message-ID: ${id}`] : []),
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      extra.body ?? `Body of mail ${n}.`,
      '',
    ].join('\r\n'),
  );
}

interface LogEntry {
  level: string;
  msg: string;
  obj: object;
}

/** The `event` field of a captured line (lifecycle lines carry one; tests match it, not the text). */
const eventOf = (e: LogEntry): unknown => (e.obj as { event?: unknown }).event;

function captureLogger(): ImapLogger & { entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const at = (level: string) => (obj: object, msg?: string) => entries.push({ level, msg: msg ?? '', obj });
  return { entries, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

interface Recorded {
  raw: Buffer;
  meta: HandOverMeta;
  /** The cursor as stored when hand-over was called: proves ack after effect. */
  cursorAtCall: number;
}

/** A hand-over that records each mail; `failCalls` lists 1-based calls that reject. */
function recorder(failCalls: number[] = []) {
  const calls: Recorded[] = [];
  let n = 0;
  const handOver = async (raw: Buffer, meta: HandOverMeta) => {
    n++;
    const cursor = await cursors.get(meta.mailboxId, meta.folder);
    if (failCalls.includes(n)) throw new RetryableError('decide queue unavailable', 'STORE_UNAVAILABLE');
    calls.push({ raw, meta, cursorAtCall: cursor?.lastUid ?? -1 });
  };
  return { calls, handOver, attempts: () => n };
}

function sourceOptions(mailboxId: string, folder: string, extra: Partial<ImapSourceOptions> = {}): ImapSourceOptions {
  return {
    mailboxId,
    host: dovecot.host,
    port: dovecot.port,
    secure: false,
    user: dovecot.user,
    password: dovecot.password,
    folder,
    pollIntervalMs: 60_000,
    reconnect: { initialDelayMs: 100, maxDelayMs: 1000 },
    ...extra,
  };
}

async function withSource<T>(source: ImapSource, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } finally {
    await source.stop();
  }
}

async function keyOf(raw: Buffer, mailboxId: string): Promise<string> {
  return (await parseRawMail(raw, { mailboxId })).messageKey;
}

describe('ImapSource against Dovecot', () => {
  it('hands each new mail over once, in UID order, and moves the cursor only after hand-over resolved', async () => {
    await dovecot.createFolder('New');
    const uids: number[] = [];
    for (const n of ['a', 'b', 'c']) uids.push((await dovecot.appendMail('New', eml(`new-${n}`))).uid);
    const rec = recorder();
    const source = new ImapSource(sourceOptions('mbx-new', 'New'), { cursor: cursors, handOver: rec.handOver, logger: captureLogger() });
    await withSource(source, async () => {
      const first = await source.pollOnce();
      expect(first).toMatchObject({ handedOver: 3, pending: 0, rescanned: true, lastUid: uids[2] });
      expect(rec.calls.map((c) => c.meta.uid)).toEqual(uids);
      // Each hand-over saw the cursor still on the previous UID (0 before the first).
      expect(rec.calls.map((c) => c.cursorAtCall)).toEqual([0, uids[0], uids[1]]);
      expect(await cursors.get('mbx-new', 'New')).toEqual({ uidValidity: first.uidValidity, lastUid: uids[2] });
      expect(rec.calls[0]!.raw.equals(eml('new-a'))).toBe(true);
      expect(await keyOf(rec.calls[0]!.raw, 'mbx-new')).toBe(mailMessageKey('mbx-new', 'new-a.imap-test@example.test'));

      const second = await source.pollOnce();
      expect(second).toMatchObject({ handedOver: 0, rescanned: false, lastUid: uids[2] });
      expect(rec.calls).toHaveLength(3);
    });
  });

  it('a restarted source (warm cursor) hands over nothing old, then only what is new', async () => {
    await dovecot.createFolder('Warm');
    await dovecot.appendMail('Warm', eml('warm-1'));
    await dovecot.appendMail('Warm', eml('warm-2'));
    const first = recorder();
    const a = new ImapSource(sourceOptions('mbx-warm', 'Warm'), { cursor: cursors, handOver: first.handOver, logger: captureLogger() });
    await withSource(a, () => a.pollOnce());
    expect(first.calls).toHaveLength(2);

    const second = recorder();
    const b = new ImapSource(sourceOptions('mbx-warm', 'Warm'), { cursor: cursors, handOver: second.handOver, logger: captureLogger() });
    await withSource(b, async () => {
      expect(await b.pollOnce()).toMatchObject({ handedOver: 0, rescanned: false });
      const { uid } = await dovecot.appendMail('Warm', eml('warm-3'));
      expect(await b.pollOnce()).toMatchObject({ handedOver: 1, lastUid: uid });
    });
    expect(second.calls.map((c) => c.raw.equals(eml('warm-3')))).toEqual([true]);
  });

  it('a failed hand-over stops the batch with the cursor intact; the next poll retries and skips nothing', async () => {
    await dovecot.createFolder('Fail');
    const uids: number[] = [];
    for (const n of [1, 2, 3, 4]) uids.push((await dovecot.appendMail('Fail', eml(`fail-${n}`))).uid);
    // Calls 2 and 3 fail: poll 1 hands over UID 1 and stops at UID 2; poll 2
    // fails again at UID 2; poll 3 hands over 2, 3, 4.
    const rec = recorder([2, 3]);
    const logger = captureLogger();
    const source = new ImapSource(sourceOptions('mbx-fail', 'Fail'), { cursor: cursors, handOver: rec.handOver, logger });
    await withSource(source, async () => {
      expect(await source.pollOnce()).toMatchObject({ handedOver: 1, pending: 3, lastUid: uids[0], error: { code: 'STORE_UNAVAILABLE' } });
      expect((await cursors.get('mbx-fail', 'Fail'))?.lastUid).toBe(uids[0]);
      expect(await source.pollOnce()).toMatchObject({ handedOver: 0, pending: 3, lastUid: uids[0] });
      expect((await cursors.get('mbx-fail', 'Fail'))?.lastUid).toBe(uids[0]);
      expect(await source.pollOnce()).toMatchObject({ handedOver: 3, pending: 0, lastUid: uids[3] });
    });
    expect(rec.calls.map((c) => c.meta.uid)).toEqual(uids);
    expect(rec.attempts()).toBe(6);
    expect(logger.entries.filter((e) => eventOf(e) === 'imap_handover_failed')).toHaveLength(2);
  });

  it('a mail copied to another folder and moved back gets new UIDs but the same message key', async () => {
    await dovecot.createFolder('CopyA');
    await dovecot.createFolder('CopyB');
    const { uid } = await dovecot.appendMail('CopyA', eml('copy-1'));
    const rec = recorder();
    // One mailbox, two folders: one source (and one cursor) per folder.
    const group = new ImapSourceGroup([sourceOptions('mbx-copy', 'CopyA'), sourceOptions('mbx-copy', 'CopyB')], {
      cursor: cursors,
      handOver: rec.handOver,
      logger: captureLogger(),
    });
    const [a, b] = group.sources as [ImapSource, ImapSource];
    let copied = 0;
    let movedBack = 0;
    try {
      expect((await a.pollOnce()).handedOver).toBe(1);
      copied = await dovecot.copy('CopyA', uid, 'CopyB');
      expect((await b.pollOnce()).handedOver).toBe(1);
      movedBack = await dovecot.move('CopyB', copied, 'CopyA');
      expect(movedBack).toBeGreaterThan(uid);
      expect((await a.pollOnce()).handedOver).toBe(1);
      expect((await b.pollOnce()).handedOver).toBe(0);
    } finally {
      await group.stop();
    }
    expect(rec.calls.map((c) => [c.meta.folder, c.meta.uid])).toEqual([
      ['CopyA', uid],
      ['CopyB', copied],
      ['CopyA', movedBack],
    ]);
    // Three arrivals, one identity: the downstream dedup sees one message.
    const keys = await Promise.all(rec.calls.map((c) => keyOf(c.raw, 'mbx-copy')));
    expect(new Set(keys)).toEqual(new Set([mailMessageKey('mbx-copy', 'copy-1.imap-test@example.test')]));
  });

  it('rescans a folder from UID 1 when UIDVALIDITY changes, with the same message keys', async () => {
    await dovecot.createFolder('Volatile');
    const mails = [eml('vol-1'), eml('vol-2', { messageId: null, body: 'no id here' })];
    for (const m of mails) await dovecot.appendMail('Volatile', m);
    const rec = recorder();
    const logger = captureLogger();
    const source = new ImapSource(sourceOptions('mbx-vol', 'Volatile'), { cursor: cursors, handOver: rec.handOver, logger });
    await withSource(source, async () => {
      const before = await source.pollOnce();
      expect(before.handedOver).toBe(2);
      await dovecot.deleteFolder('Volatile');
      await dovecot.createFolder('Volatile');
      for (const m of mails) await dovecot.appendMail('Volatile', m);
      const status = await dovecot.status('Volatile');
      expect(status.uidValidity).not.toBe(before.uidValidity);
      // Dovecot drops a session whose selected folder was deleted; the next poll reconnects.
      const after = await source.pollOnce().catch(() => source.pollOnce());
      expect(after).toMatchObject({ rescanned: true, handedOver: 2, uidValidity: status.uidValidity });
      expect(await cursors.get('mbx-vol', 'Volatile')).toEqual({ uidValidity: status.uidValidity, lastUid: after.lastUid });
    });
    const keys = await Promise.all(rec.calls.map((c) => keyOf(c.raw, 'mbx-vol')));
    expect(keys).toHaveLength(4);
    expect(keys.slice(2)).toEqual(keys.slice(0, 2));
    expect(logger.entries.some((e) => e.level === 'warn' && eventOf(e) === 'imap_uidvalidity_changed')).toBe(true);
  });

  it('never changes flags and never reads \\Seen as handled', async () => {
    await dovecot.createFolder('Flags');
    const seen = await dovecot.appendMail('Flags', eml('flags-seen'), { flags: ['\\Seen'] });
    const unseen = await dovecot.appendMail('Flags', eml('flags-unseen'));
    const flagged = await dovecot.appendMail('Flags', eml('flags-flagged'), { flags: ['\\Flagged'] });
    const uids = [seen.uid, unseen.uid, flagged.uid];
    const flags = () => Promise.all(uids.map((uid) => dovecot.flagsOf('Flags', uid)));
    const before = await flags();
    // No session selected the folder read-write yet, so \Recent is still on:
    // it would be cleared by a SELECT, which the source must never do.
    expect(before).toEqual([['\\Recent', '\\Seen'], ['\\Recent'], ['\\Flagged', '\\Recent']]);
    const rec = recorder();
    const source = new ImapSource(sourceOptions('mbx-flags', 'Flags'), { cursor: cursors, handOver: rec.handOver, logger: captureLogger() });
    await withSource(source, async () => {
      expect((await source.pollOnce()).handedOver).toBe(3);
      await source.pollOnce();
    });
    // The \Seen mail was handed over like the others.
    expect(rec.calls.map((c) => c.meta.uid)).toEqual(uids);
    expect(await flags()).toEqual(before);
  });

  it('hands an oversize mail over as its header block with a note, never skipping it', async () => {
    await dovecot.createFolder('Big');
    const big = eml('big-1', { body: 'x'.repeat(10_000) });
    const { uid } = await dovecot.appendMail('Big', big);
    const small = await dovecot.appendMail('Big', eml('big-2'));
    const rec = recorder();
    const source = new ImapSource(sourceOptions('mbx-big', 'Big', { maxMessageBytes: 2000 }), {
      cursor: cursors,
      handOver: rec.handOver,
      logger: captureLogger(),
    });
    await withSource(source, async () => {
      expect(await source.pollOnce()).toMatchObject({ handedOver: 2, truncated: 1, lastUid: small.uid });
    });
    const [first, second] = rec.calls;
    expect(first!.meta).toMatchObject({ uid, truncated: true, sizeBytes: big.length });
    expect(first!.meta.note).toMatch(/over maxMessageBytes 2000/);
    const headerBlock = big.subarray(0, big.indexOf('\r\n\r\n') + 4);
    expect(first!.raw.equals(headerBlock)).toBe(true);
    expect(second!.meta.truncated).toBe(false);

    const parsed = await parseImapMail(first!.raw, first!.meta);
    expect(parsed.messageKey).toBe(await keyOf(big, 'mbx-big'));
    expect(parsed.input.sizeBytes).toBe(big.length);
    expect(parsed.input.note).toMatch(/header block only/);
    expect(parsed.input.subject).toBe('test mail big-1');
  });

  it('wakes on IDLE without waiting for the poll interval', async () => {
    await dovecot.createFolder('Idle');
    const rec = recorder();
    const logger = captureLogger();
    // The safety-net poll is an hour away: only IDLE can bring the mail in.
    const source = new ImapSource(sourceOptions('mbx-idle', 'Idle', { pollIntervalMs: 3_600_000 }), { cursor: cursors, handOver: rec.handOver, logger });
    await withSource(source, async () => {
      await source.start();
      await waitUntil(() => source.status().lastPollAt, 'first poll');
      const { uid } = await dovecot.appendMail('Idle', eml('idle-1'));
      await waitUntil(() => rec.calls.some((c) => c.meta.uid === uid), 'IDLE-triggered hand-over', { timeoutMs: 30_000 });
    });
    expect(rec.calls).toHaveLength(1);
    expect(logger.entries.some((e) => eventOf(e) === 'imap_connected' && (e.obj as { idle?: boolean }).idle === true)).toBe(true);
  });

  it('reconnects after Dovecot restarts and picks up mail that arrived while it was down', async () => {
    await dovecot.createFolder('Restart');
    const rec = recorder();
    const logger = captureLogger();
    const source = new ImapSource(sourceOptions('mbx-restart', 'Restart', { pollIntervalMs: 300 }), { cursor: cursors, handOver: rec.handOver, logger });
    await withSource(source, async () => {
      await source.start();
      await dovecot.appendMail('Restart', eml('restart-1'));
      await waitUntil(() => rec.calls.length === 1, 'first mail');

      await dovecot.pause();
      // Delivered by the "MTA" while IMAP is down.
      dovecot.deliverToMaildir('Restart', eml('restart-2'));
      await waitUntil(() => logger.entries.some((e) => eventOf(e) === 'imap_connect_failed'), 'a failed reconnect attempt');
      await dovecot.resume();

      await waitUntil(() => rec.calls.length === 2, 'mail delivered during the outage', { timeoutMs: 30_000 });
      await dovecot.appendMail('Restart', eml('restart-3'));
      await waitUntil(() => rec.calls.length === 3, 'mail after the restart', { timeoutMs: 30_000 });
      expect(source.status()).toMatchObject({ connected: true, reconnectAttempts: 0 });
    });
    expect(rec.calls.map((c) => c.raw.toString().match(/Subject: (.*)/)?.[1])).toEqual([
      'test mail restart-1',
      'test mail restart-2',
      'test mail restart-3',
    ]);
    const events = logger.entries.map(eventOf);
    expect(events).toContain('imap_connection_closed');
    expect(events).toContain('imap_reconnect_scheduled');
    expect(events).toContain('imap_reconnected');
  });

  it('runs several mailboxes at once, one connection each', async () => {
    await dovecot.createFolder('GroupA');
    await dovecot.createFolder('GroupB');
    const rec = recorder();
    const group = new ImapSourceGroup(
      [sourceOptions('mbx-ga', 'GroupA', { pollIntervalMs: 300 }), sourceOptions('mbx-gb', 'GroupB', { pollIntervalMs: 300 })],
      { cursor: cursors, handOver: rec.handOver, logger: captureLogger() },
    );
    try {
      await group.start();
      await dovecot.appendMail('GroupA', eml('ga-1'));
      await dovecot.appendMail('GroupB', eml('gb-1'));
      await waitUntil(() => rec.calls.length === 2, 'both mailboxes');
      expect(group.sources.map((s) => s.status().connected)).toEqual([true, true]);
    } finally {
      await group.stop();
    }
    expect(rec.calls.map((c) => c.meta.mailboxId).sort()).toEqual(['mbx-ga', 'mbx-gb']);
    expect(group.sources.map((s) => s.status().connected)).toEqual([false, false]);
    expect(() => new ImapSourceGroup([sourceOptions('x', 'INBOX'), sourceOptions('x', 'INBOX')], {
      cursor: cursors,
      handOver: rec.handOver,
      logger: captureLogger(),
    })).toThrow(/configured twice/);
  });

  it('reports lag: the age of the oldest mail not handed over, 0 when caught up', async () => {
    await dovecot.createFolder('Lag');
    await dovecot.appendMail('Lag', eml('lag-1'), { date: new Date(Date.now() - 3_600_000) });
    const lags: number[] = [];
    const rec = recorder([1]);
    const source = new ImapSource(sourceOptions('mbx-lag', 'Lag'), {
      cursor: cursors,
      handOver: rec.handOver,
      logger: captureLogger(),
      onLag: (_mailbox, seconds) => lags.push(seconds),
    });
    await withSource(source, async () => {
      await source.pollOnce();
      await source.pollOnce();
    });
    expect(lags).toHaveLength(2);
    expect(lags[0]).toBeGreaterThanOrEqual(3600);
    expect(lags[1]).toBe(0);
  });
});
