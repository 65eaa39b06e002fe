import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRawMail } from '@singleshot/mail';
import { waitUntil } from '@singleshot/test-harness';
import { mailgunRawMultipart, sendgridRaw, startMailFleet, type HttpAnswer, type MailFleet } from './support/mail-fleet';
import { hostileCases, type HostileCase } from './support/mail-hostile';

// Hostile mail through every ingest path of a real fleet: the shared corpus
// (real-world mails that broke parsers: deep HTML, huge text, a file that made
// a parser run out of memory) plus generated cases (see support/mail-hostile.ts
// for why each exists), each APPENDed to a real Dovecot, posted as raw MIME and
// posted through Mailgun's and SendGrid's raw formats. No crash, no hang (every
// wait is bounded), one operation per mail that ends sent, nothing lost.
//
// IMAP goes first, so the decision sees the IMAP path's summary (with its
// truncation note for mails over the cap) and every HTTP arrival after it must
// land on the same message key ("duplicate").
const CORPUS = path.resolve(__dirname, '../../../shared/corpus/mail');
const MiB = 1024 * 1024;
const IMAP_CAP = 2 * MiB;
const BODY_LIMIT = 12 * MiB;
const MAILBOX = 'hostile';
const FOLDER = 'Hostile';

let f: MailFleet;

beforeAll(async () => {
  f = await startMailFleet({ mailboxes: [{ id: MAILBOX, folder: FOLDER, maxMessageBytes: IMAP_CAP }], ingest: { maxBodyBytes: BODY_LIMIT } });
});

afterAll(async () => {
  await f?.stop();
});

const corpusFiles = readdirSync(CORPUS).filter((file) => file.endsWith('.eml')).sort();

function describeAnswer(a: HttpAnswer): string {
  return `${a.status} ${a.json?.status ?? a.json?.error?.code ?? '?'}`;
}

describe('hostile mail through IMAP, raw MIME, Mailgun and SendGrid', () => {
  it('finds the shared corpus (an empty list would make the run below vacuous)', () => {
    expect(corpusFiles.length).toBeGreaterThanOrEqual(10);
  });

  it('every mail ends in exactly one operation that is sent; the fleet stays up; nothing is lost', async () => {
    const mails: Array<HostileCase & { key: string }> = [];
    const all: HostileCase[] = [
      ...corpusFiles.map((file) => ({ name: `corpus/${file}`, raw: readFileSync(path.join(CORPUS, file)) })),
      ...hostileCases({ imapCapBytes: IMAP_CAP, bodyLimitBytes: BODY_LIMIT }),
    ];
    for (const mail of all) {
      // What an HTTP arrival of the whole mail is keyed by (mailbox id + Message-ID, or the fingerprint).
      mails.push({ ...mail, key: (await parseRawMail(mail.raw, { mailboxId: MAILBOX, maxBytes: BODY_LIMIT })).messageKey });
      expect(mail.overImapCap ?? false, `${mail.name} size vs the IMAP cap`).toBe(mail.raw.length > IMAP_CAP);
      expect(mail.overBodyLimit ?? false, `${mail.name} size vs the body limit`).toBe(mail.raw.length > BODY_LIMIT);
    }
    const problems: string[] = [];

    // 1. IMAP: every mail APPENDed; the poller hands each over once.
    let last = { uid: 0, uidValidity: '' };
    for (const mail of mails) last = await f.dovecot.appendMail(FOLDER, mail.raw);
    await waitUntil(
      async () => {
        const cursor = await f.cursors.get(MAILBOX, FOLDER);
        return cursor?.uidValidity === last.uidValidity && cursor.lastUid >= last.uid;
      },
      `the poller to hand over all ${mails.length} mails`,
      { timeoutMs: 120_000 },
    );
    for (const mail of mails) {
      const record = await f.rt.messages.get(mail.key);
      if (!record?.via.imap) problems.push(`${mail.name}: the IMAP copy was not keyed like the mail itself (${mail.key.slice(0, 12)})`);
    }

    // 2. HTTP: raw MIME, Mailgun raw MIME (multipart, as Mailgun posts large mails), SendGrid raw.
    for (const mail of mails) {
      const answers = {
        raw: await f.raw(MAILBOX, mail.raw),
        mailgun: await f.mailgun(MAILBOX, mailgunRawMultipart(mail.raw)),
        sendgrid: await f.sendgrid(MAILBOX, sendgridRaw(mail.raw)),
      };
      for (const [path, answer] of Object.entries(answers)) {
        const refused = path === 'raw' && mail.overBodyLimit;
        const expected = refused ? '413 BODY_TOO_LARGE' : '202 duplicate';
        if (describeAnswer(answer) !== expected) problems.push(`${mail.name} via ${path}: ${describeAnswer(answer)}, expected ${expected}`);
        if (!refused && answer.json?.messageKey !== mail.key) problems.push(`${mail.name} via ${path}: key ${answer.json?.messageKey?.slice(0, 12)}, expected ${mail.key.slice(0, 12)}`);
      }
    }

    // 3. Every distinct mail is sent once; each arrival was counted on its key.
    const keys = [...new Set(mails.map((m) => m.key))];
    for (const key of keys) await f.waitSent(MAILBOX, key, 120_000);
    await f.waitQuiet(120_000);
    for (const key of keys) {
      const same = mails.filter((m) => m.key === key);
      const names = same.map((m) => m.name).join(' + ');
      const record = await f.rt.messages.get(key);
      const opKey = f.opKeyOf(MAILBOX, key);
      const expectedVia = { imap: same.length, mailgun: same.length, sendgrid: same.length, 'mail-raw': same.filter((m) => !m.overBodyLimit).length };
      for (const [via, n] of Object.entries(expectedVia)) {
        if ((record?.via[via] ?? 0) !== n) problems.push(`${names}: ${record?.via[via] ?? 0} arrival(s) via ${via}, expected ${n}`);
      }
      if (JSON.stringify(record?.operations) !== JSON.stringify([opKey])) problems.push(`${names}: operations ${JSON.stringify(record?.operations)}`);
      const status = (await f.rt.operations.get(opKey))?.status;
      if (status !== 'sent') problems.push(`${names}: operation ${status}`);
      if (f.sink.accepted.get(opKey)?.count !== 1 || f.sink.countFor(opKey) !== 1) problems.push(`${names}: ${f.sink.countFor(opKey)} POSTs to the provider`);
      // A clear recorded outcome: a mail over the IMAP cap is notified as truncated, not as a short mail.
      const text = (f.sink.accepted.get(opKey)?.body as { text?: string } | undefined)?.text ?? '';
      if (same.some((m) => m.overImapCap) && !text.includes('over maxMessageBytes')) problems.push(`${names}: no truncation note in "${text.slice(0, 200)}"`);
    }
    // Nothing lost, nothing extra: one notification per distinct mail, none for a key no mail has.
    const notified = [...f.sink.accepted.values()].map((a) => (a.body as { messageKey: string }).messageKey);
    const extra = notified.filter((k) => !keys.includes(k));
    if (extra.length > 0) problems.push(`${extra.length} notification(s) for keys no mail has: ${extra.map((k) => k.slice(0, 12)).join(', ')}`);
    expect(problems).toEqual([]);
    expect(notified.sort()).toEqual([...keys].sort());

    // No crash: the same fleet process is up and answering.
    expect(f.main.child.exitCode).toBeNull();
    expect((await fetch(`${f.base}/healthz`, { signal: AbortSignal.timeout(10_000) })).status).toBe(200);
  });
});
