import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mailMessageKey } from '@singleshot/core';
import { parseRawMail } from '@singleshot/mail';
import {
  buildEml,
  mailgunParsed,
  mailgunRaw,
  mailgunSignature,
  postmarkJson,
  sendgridParsed,
  sendgridRaw,
  simpleEml,
  startMailFleet,
  type HttpAnswer,
  type MailFleet,
} from './support/mail-fleet';

// One email, many arrivals: provider webhooks (Mailgun, Postmark, SendGrid,
// raw MIME) and the IMAP poller of a real Dovecot all feed one real fleet
// (`singleshot start --only ingest,decision,delivery`), and the owner must get
// exactly one notification per email, counted as accepted effects per
// Idempotency-Key at a real HTTP provider. Each case has its own mailbox (and
// IMAP folder), so message keys and cursors never leak between cases.
const FOLDERS = { both: 'Both', twins: 'Twins', formats: 'Formats', nomsgid: 'NoMsgId', 'nomsgid-html': 'NoMsgIdHtml' } as const;
const WEBHOOK_ONLY = ['dup-postmark', 'dup-sendgrid', 'dup-mailgun', 'auth'];

let f: MailFleet;

beforeAll(async () => {
  f = await startMailFleet({
    mailboxes: [...Object.entries(FOLDERS).map(([id, folder]) => ({ id, folder })), ...WEBHOOK_ONLY.map((id) => ({ id }))],
  });
});

afterAll(async () => {
  await f?.stop();
});

/** Exactly one accepted effect for the message, for its one operation, from one POST. */
async function expectOneNotification(mailboxId: string, messageKey: string): Promise<void> {
  const opKey = f.opKeyOf(mailboxId, messageKey);
  expect((await f.rt.messages.get(messageKey))?.operations).toEqual([opKey]);
  expect(f.acceptedFor(messageKey)).toHaveLength(1);
  expect(f.sink.accepted.get(opKey)?.count).toBe(1);
  expect(f.sink.countFor(opKey)).toBe(1);
  expect(await f.rt.operations.get(opKey)).toMatchObject({ status: 'sent', recipient: f.ownerOf(mailboxId), messageKey });
}

const statuses = (answers: HttpAnswer[]) => answers.map((a) => `${a.status} ${a.json?.status ?? a.json?.error?.code}`);

describe('mail arriving through several channels', () => {
  it('one email through a provider webhook and through IMAP: one operation, one notification', async () => {
    // Webhook first, poller later: the story the project was born from.
    const early = simpleEml({ messageId: '<webhook-first@mail.example.test>', subject: 'Webhook first' });
    const hook = await f.mailgun('both', mailgunRaw(early));
    expect(statuses([hook])).toEqual(['202 accepted']);
    const earlyKey = hook.json?.messageKey as string;
    await f.dovecot.appendMail(FOLDERS.both, early);

    // The poller first, the provider's webhook after: the webhook must hear "duplicate".
    const late = simpleEml({ messageId: '<imap-first@mail.example.test>', subject: 'IMAP first' });
    const lateKey = mailMessageKey('both', 'imap-first@mail.example.test');
    await f.dovecot.appendMail(FOLDERS.both, late);
    await f.waitArrivals(lateKey, 'imap', 1);
    const lateHook = await f.postmark('both', postmarkJson({ messageId: true, raw: late }));
    expect(statuses([lateHook])).toEqual(['202 duplicate']);
    expect(lateHook.json?.messageKey).toBe(lateKey);

    expect((await f.waitArrivals(earlyKey, 'imap', 1)).via).toEqual({ mailgun: 1, imap: 1 });
    expect((await f.rt.messages.get(lateKey))?.via).toEqual({ imap: 1, postmark: 1 });
    await f.waitSent('both', earlyKey);
    await f.waitSent('both', lateKey);
    await f.waitQuiet();
    await expectOneNotification('both', earlyKey);
    await expectOneNotification('both', lateKey);
  });

  it('the same mail through mailgun, postmark, sendgrid, raw MIME and IMAP: one message key, one notification', async () => {
    const eml = buildEml({ messageId: true });
    // The key an independent reader expects: mailbox + the normalized Message-ID (domain lower-cased).
    const expected = mailMessageKey('formats', 'order-42.1709629200@mail.example.test');
    const answers = [
      await f.raw('formats', eml),
      await f.mailgun('formats', mailgunRaw(eml)),
      await f.mailgun('formats', mailgunParsed({ messageId: true })),
      await f.post('/v1/mail/inbound/mailgun/formats/mime', mailgunRaw(eml)),
      await f.postmark('formats', postmarkJson({ messageId: true })),
      await f.postmark('formats', postmarkJson({ messageId: true, raw: eml })),
      await f.sendgrid('formats', sendgridRaw(eml)),
      await f.sendgrid('formats', sendgridParsed({ messageId: true })),
    ];
    expect(statuses(answers)).toEqual(['202 accepted', ...Array(7).fill('202 duplicate')]);
    expect(new Set(answers.map((a) => a.json?.messageKey))).toEqual(new Set([expected]));

    await f.dovecot.appendMail(FOLDERS.formats, eml);
    const record = await f.waitArrivals(expected, 'imap', 1);
    expect(record.via).toEqual({ 'mail-raw': 1, mailgun: 3, postmark: 2, sendgrid: 2, imap: 1 });
    expect(record.arrivals).toBe(9);
    await f.waitSent('formats', expected);
    await f.waitQuiet();
    await expectOneNotification('formats', expected);
  });

  it('a mail without Message-ID through IMAP, every webhook format and raw MIME: one notification, by the fallback fingerprint', async () => {
    const sources = ['imap', 'mailgun', 'postmark', 'sendgrid', 'mail-raw'];
    const before = Object.fromEntries(await Promise.all(sources.map(async (s) => [s, await f.main.metric('singleshot_fingerprint_fallbacks_total', { source: s })])));
    // A multipart/alternative mail, and an HTML-only one (for which Mailgun's and
    // SendGrid's parsed forms carry their own text rendering). Each has its own
    // mailbox: their fingerprints are equal on purpose (same sender, subject,
    // date, and the HTML renders to the same text), the documented compromise.
    const variants = [
      { mailbox: 'nomsgid', folder: FOLDERS.nomsgid, shape: { messageId: false } },
      { mailbox: 'nomsgid-html', folder: FOLDERS['nomsgid-html'], shape: { messageId: false, htmlOnly: true } },
    ];
    for (const { mailbox, folder, shape } of variants) {
      const eml = buildEml(shape);
      const local = await parseRawMail(eml, { mailboxId: mailbox });
      expect(local.input.identity).toBe('fingerprint');
      const answers = [
        await f.mailgun(mailbox, mailgunRaw(eml)),
        await f.mailgun(mailbox, mailgunParsed(shape)),
        await f.postmark(mailbox, postmarkJson(shape)),
        await f.postmark(mailbox, postmarkJson({ ...shape, raw: eml })),
        await f.sendgrid(mailbox, sendgridRaw(eml)),
        await f.sendgrid(mailbox, sendgridParsed(shape)),
        await f.raw(mailbox, eml),
      ];
      expect(statuses(answers)).toEqual(['202 accepted', ...Array(6).fill('202 duplicate')]);
      expect(new Set(answers.map((a) => a.json?.messageKey))).toEqual(new Set([local.messageKey]));
      await f.dovecot.appendMail(folder, eml);
      const record = await f.waitArrivals(local.messageKey, 'imap', 1);
      expect(record.via).toEqual({ imap: 1, mailgun: 2, postmark: 2, sendgrid: 2, 'mail-raw': 1 });
      await f.waitSent(mailbox, local.messageKey);
      await f.waitQuiet();
      await expectOneNotification(mailbox, local.messageKey);
      expect((f.sink.accepted.get(f.opKeyOf(mailbox, local.messageKey))?.body as { text: string }).text).toContain('identity=fingerprint');
    }
    // The compromise is counted on the ingest process, per path that used it.
    for (const s of sources) {
      const after = await f.main.metric('singleshot_fingerprint_fallbacks_total', { source: s });
      expect(after - (before[s] as number), `fingerprint fallbacks via ${s}`).toBe(s === 'imap' || s === 'mail-raw' ? 2 : 4);
    }
  });

  it('two different emails with the same subject and body but different Message-IDs: two notifications, never merged', async () => {
    const twin = (id: string) => simpleEml({ messageId: `<${id}@mail.example.test>`, subject: 'Your order', body: 'Same words, another mail.' });
    const [a, b] = [twin('twin-a'), twin('twin-b')];
    const answers = [await f.raw('twins', a), await f.raw('twins', b)];
    expect(statuses(answers)).toEqual(['202 accepted', '202 accepted']);
    const [keyA, keyB] = answers.map((x) => x.json?.messageKey as string) as [string, string];
    expect(keyA).not.toBe(keyB);
    // The IMAP copies of both are duplicates of their own webhook arrival, not of each other.
    await f.dovecot.appendMany(FOLDERS.twins, [a, b]);
    await f.waitArrivals(keyA, 'imap', 1);
    await f.waitArrivals(keyB, 'imap', 1);
    await f.waitSent('twins', keyA);
    await f.waitSent('twins', keyB);
    await f.waitQuiet();
    await expectOneNotification('twins', keyA);
    await expectOneNotification('twins', keyB);
    expect(f.opKeyOf('twins', keyA)).not.toBe(f.opKeyOf('twins', keyB));
  });
});

describe('provider webhook retries', () => {
  // A provider retries when our 2xx came late or was lost: the same event again.
  const cases: Array<{ provider: string; mailbox: string; send: () => Promise<HttpAnswer> }> = [];
  // Postmark and SendGrid resend the identical request.
  const postmarkBody = postmarkJson({ messageId: true });
  cases.push({ provider: 'postmark', mailbox: 'dup-postmark', send: () => f.postmark('dup-postmark', postmarkBody) });
  const sendgridBody = sendgridParsed({ messageId: true });
  cases.push({ provider: 'sendgrid', mailbox: 'dup-sendgrid', send: () => f.sendgrid('dup-sendgrid', sendgridBody) });
  // Mailgun signs every POST afresh (a reused token is a replay, refused below).
  cases.push({ provider: 'mailgun', mailbox: 'dup-mailgun', send: () => f.mailgun('dup-mailgun', mailgunParsed({ messageId: true })) });

  it.each(cases)('the same $provider webhook delivered twice: no new operation', async ({ provider, mailbox, send }) => {
    const first = await send();
    const second = await send();
    expect(statuses([first, second])).toEqual(['202 accepted', '202 duplicate']);
    const key = first.json?.messageKey as string;
    expect(second.json?.messageKey).toBe(key);
    expect(key).toBe(mailMessageKey(mailbox, 'order-42.1709629200@mail.example.test'));
    const record = await f.rt.messages.get(key);
    expect(record).toMatchObject({ arrivals: 2, via: { [provider]: 2 }, firstVia: provider });
    await f.waitSent(mailbox, key);
    await f.waitQuiet();
    // One decide job (id = message key) and one operation, however often it arrives.
    expect((await f.rt.queues.decide.getJob(key))?.data.via).toBe(provider);
    await expectOneNotification(mailbox, key);
  });
});

describe('Mailgun signature checks', () => {
  const decideJobs = async () => Object.values(await f.rt.queues.decide.getJobCounts()).reduce((a, b) => a + b, 0);

  it('bad signature, stale timestamp, replayed token: 401, nothing queued', async () => {
    await f.waitQuiet();
    const target = simpleEml({ messageId: '<forged@mail.example.test>', subject: 'Please wire money' });
    const targetKey = mailMessageKey('auth', 'forged@mail.example.test');
    // A genuine request, whose signature an attacker then captures.
    const genuine = simpleEml({ messageId: '<genuine@mail.example.test>', subject: 'Genuine' });
    const captured = mailgunSignature();
    const ok = await f.mailgun('auth', mailgunRaw(genuine, captured));
    expect(statuses([ok])).toEqual(['202 accepted']);
    await f.waitSent('auth', ok.json?.messageKey as string);
    await f.waitQuiet();
    const jobsBefore = await decideJobs();

    const refused = [
      // Signed with another key.
      await f.mailgun('auth', mailgunRaw(target, { ...mailgunSignature(), signature: 'ab'.repeat(32) })),
      // Correctly signed an hour ago: outside the 300 s window.
      await f.mailgun('auth', mailgunRaw(target, mailgunSignature(Math.floor(Date.now() / 1000) - 3600))),
      // The captured token with another mail, and the captured request resent as it was.
      await f.mailgun('auth', mailgunRaw(target, captured)),
      await f.mailgun('auth', mailgunRaw(genuine, captured)),
    ];
    expect(statuses(refused)).toEqual(['401 BAD_SIGNATURE', '401 STALE_TIMESTAMP', '401 REPLAYED_TOKEN', '401 REPLAYED_TOKEN']);
    expect(await f.rt.messages.get(targetKey)).toBeNull();
    expect(await f.rt.queues.decide.getJob(targetKey)).toBeUndefined();
    expect(await decideJobs()).toBe(jobsBefore);
    expect((await f.rt.messages.get(ok.json?.messageKey as string))?.arrivals).toBe(1);

    // Nothing of the refused mail was kept: its first genuine arrival is "accepted".
    const genuineTarget = await f.mailgun('auth', mailgunRaw(target));
    expect(statuses([genuineTarget])).toEqual(['202 accepted']);
    await f.waitSent('auth', targetKey);
    await f.waitQuiet();
    await expectOneNotification('auth', targetKey);
  });
});
