import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mailMessageKey } from '@singleshot/core';
import { waitUntil } from '@singleshot/test-harness';
import { simpleEml, startMailFleet, type MailFleet } from './support/mail-fleet';

// The IMAP source against a real Dovecot, inside a real fleet: UIDs are a
// cursor, never identity. A mail that comes back under a new UID (copied away
// and moved back, or a whole folder recreated under a new UIDVALIDITY) is
// handed over again and must be recognized by its message key; a restarted
// server must not lose what arrived while it was down.
const FOLDERS = { copymove: 'CopyMove', uidvalidity: 'Recreated', restart: 'Restart' } as const;

let f: MailFleet;

beforeAll(async () => {
  f = await startMailFleet({ mailboxes: Object.entries(FOLDERS).map(([id, folder]) => ({ id, folder })) });
});

afterAll(async () => {
  await f?.stop();
});

async function expectOneNotification(mailboxId: string, messageKey: string): Promise<void> {
  const opKey = f.opKeyOf(mailboxId, messageKey);
  expect((await f.rt.messages.get(messageKey))?.operations).toEqual([opKey]);
  expect(f.acceptedFor(messageKey)).toHaveLength(1);
  expect(f.sink.countFor(opKey)).toBe(1);
  expect((await f.rt.operations.get(opKey))?.status).toBe('sent');
}

/** Waits until the poller's cursor for `mailboxId` has passed `uid` under `uidValidity`. */
const waitCursor = (mailboxId: keyof typeof FOLDERS, uidValidity: string, uid: number) =>
  waitUntil(
    async () => {
      const cursor = await f.cursors.get(mailboxId, FOLDERS[mailboxId]);
      return cursor?.uidValidity === uidValidity && cursor.lastUid >= uid ? cursor : undefined;
    },
    `the ${mailboxId} cursor to pass UID ${uid} (UIDVALIDITY ${uidValidity})`,
  );

describe('IMAP: UIDs are a cursor, never identity', () => {
  it('the same email copied to another folder and moved back (new UIDs): no new notification', async () => {
    const eml = simpleEml({ messageId: '<copied@mail.example.test>', subject: 'Copied around' });
    const key = mailMessageKey('copymove', 'copied@mail.example.test');
    const { uid, uidValidity } = await f.dovecot.appendMail(FOLDERS.copymove, eml);
    await f.waitSent('copymove', key);

    await f.dovecot.createFolder('Archive');
    const archived = await f.dovecot.copy(FOLDERS.copymove, uid, 'Archive');
    const back = await f.dovecot.move('Archive', archived, FOLDERS.copymove);
    expect(back).toBeGreaterThan(uid);
    // The poller handed the moved-back copy over (cursor past its UID) and ingest counted it as a duplicate arrival.
    await waitCursor('copymove', uidValidity, back);
    expect((await f.waitArrivals(key, 'imap', 2)).arrivals).toBe(2);
    await f.waitQuiet();
    await expectOneNotification('copymove', key);
  });

  it('UIDVALIDITY changes (folder deleted and recreated with the same mail): no new notification', async () => {
    const eml = simpleEml({ messageId: '<recreated@mail.example.test>', subject: 'Folder recreated' });
    const key = mailMessageKey('uidvalidity', 'recreated@mail.example.test');
    const first = await f.dovecot.appendMail(FOLDERS.uidvalidity, eml);
    await f.waitSent('uidvalidity', key);
    await waitCursor('uidvalidity', first.uidValidity, first.uid);

    await f.dovecot.deleteFolder(FOLDERS.uidvalidity);
    await f.dovecot.createFolder(FOLDERS.uidvalidity);
    const again = await f.dovecot.appendMail(FOLDERS.uidvalidity, eml);
    // Without a new UIDVALIDITY this case would prove nothing.
    expect(again.uidValidity).not.toBe(first.uidValidity);

    // The poller noticed, rescanned from UID 1 and handed the mail over again.
    await waitCursor('uidvalidity', again.uidValidity, again.uid);
    expect((await f.waitArrivals(key, 'imap', 2)).arrivals).toBe(2);
    await f.waitQuiet();
    await expectOneNotification('uidvalidity', key);
    expect(f.main.logs.some((l) => l.mailboxId === 'uidvalidity' && l.event === 'imap_uidvalidity_changed')).toBe(true);
  });

  it('Dovecot restarted while the poller runs: it reconnects and picks up what arrived meanwhile', async () => {
    const mail = (n: string) => simpleEml({ messageId: `<${n}@mail.example.test>`, subject: `Restart ${n}` });
    const key = (n: string) => mailMessageKey('restart', `${n}@mail.example.test`);
    const before = await f.dovecot.appendMail(FOLDERS.restart, mail('before'));
    await f.waitSent('restart', key('before'));
    await waitCursor('restart', before.uidValidity, before.uid);
    const reconnectsBefore = f.main.logs.filter((l) => l.mailboxId === 'restart' && l.event === 'imap_reconnected').length;

    await f.dovecot.pause();
    // Delivered by the MTA while the IMAP server is down (written into the maildir).
    f.dovecot.deliverToMaildir(FOLDERS.restart, mail('while-down'));
    await f.dovecot.resume();
    await f.dovecot.appendMail(FOLDERS.restart, mail('after'));

    await f.waitSent('restart', key('while-down'));
    await f.waitSent('restart', key('after'));
    await waitUntil(
      () => f.main.logs.filter((l) => l.mailboxId === 'restart' && l.event === 'imap_reconnected').length > reconnectsBefore,
      'the restart poller to log its reconnect',
    );
    await f.waitQuiet();
    for (const n of ['before', 'while-down', 'after']) await expectOneNotification('restart', key(n));
    // The fleet process lived through it: the same process reconnected.
    expect(f.main.child.exitCode).toBeNull();
  });
});
