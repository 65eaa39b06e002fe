import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mailMessageKey } from '@singleshot/core';
import { waitUntil, type AppProcess } from '@singleshot/test-harness';
import { mailgunRaw, postmarkJson, sendgridRaw, simpleEml, startMailFleet, type MailFleet } from './support/mail-fleet';

// Mail notifications under delivery faults. Ingest (with its IMAP pollers) and
// decision run in one process; delivery workers are separate OS processes
// (`singleshot start --only delivery`), so a test can race two of them or
// SIGSTOP one. The provider is a real HTTP sink that dedups by Idempotency-Key
// as a real idempotent provider does, and counts what it accepted.
const LEASE_MS = 4000;
const FOLDERS = { stopped: 'Stopped' } as const;

let f: MailFleet;
const workers: AppProcess[] = [];

beforeAll(async () => {
  f = await startMailFleet({
    apps: 'ingest,decision',
    mailboxes: [{ id: 'race' }, { id: 'stopped', folder: FOLDERS.stopped }, { id: 'retry' }, { id: 'lost' }],
    // Concurrency 1: each worker process holds at most one job, so a second
    // job for the same operation must go to the other process.
    delivery: { leaseMs: LEASE_MS, attempts: 5, backoffMs: [100, 200, 400], concurrency: 1, metricsPort: 0 },
  });
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
});

afterAll(async () => {
  await f?.stop();
});

const worker = async () => {
  const w = f.spawn('delivery');
  workers.push(w);
  await w.metricsPort();
  return w;
};
const statusOf = async (opKey: string) => (await f.rt.operations.get(opKey))?.status;
const journalTypes = async (opKey: string) => {
  const record = await f.rt.operations.get(opKey);
  return (await f.rt.journal.forOperation(opKey, record?.journalIds ?? [])).map((e) => e.type);
};

describe('mail notifications under delivery faults', () => {
  it('two workers on the same operation at once: only one gets to send', async () => {
    const [a, b] = [await worker(), await worker()];
    const eml = simpleEml({ messageId: '<race@mail.example.test>', subject: 'Race' });
    const key = mailMessageKey('race', 'race@mail.example.test');
    const opKey = f.opKeyOf('race', key);
    // The first send is slow, so the second claim lands while the first holds the lock.
    f.sink.scriptFor(f.ownerOf('race'), { delayMs: 2000, then: 'ok' });
    expect((await f.postmark('race', postmarkJson({ messageId: true, raw: eml }))).status).toBe(202);

    await waitUntil(() => f.sink.countFor(opKey) === 1, 'the first send to reach the provider');
    // A second deliver job for the same operation under another job id (say a
    // decide job redelivered after its deliver job was removed): the other idle process takes it.
    const original = await waitUntil(() => f.rt.queues.deliver.getJob(opKey), 'the original deliver job');
    const copy = await f.rt.queues.deliver.add(original.name, original.data, { jobId: `${opKey}-copy` });

    await waitUntil(async () => (await statusOf(opKey)) === 'sent', 'the operation to be sent');
    const done = await waitUntil(async () => ((await copy.isCompleted()) ? f.rt.queues.deliver.getJob(copy.id as string) : undefined), 'the copy to finish');
    // The loser met the lock, was counted, came back later and found it sent.
    expect(done.returnvalue).toMatchObject({ kind: 'ended', status: 'sent', endedNow: false });
    const conflicts = (await a.metric('singleshot_lock_conflicts_total')) + (await b.metric('singleshot_lock_conflicts_total'));
    expect(conflicts).toBeGreaterThanOrEqual(1);
    expect(f.sink.countFor(opKey)).toBe(1);
    expect(f.sink.accepted.get(opKey)?.count).toBe(1);
    expect((await journalTypes(opKey)).filter((t) => t === 'sent')).toHaveLength(1);
  });

  it('a worker stopped after claiming, before the provider took it: after the lease another sends, once; the stale commit is fenced', async () => {
    const a = await worker();
    const eml = simpleEml({ messageId: '<stopped@mail.example.test>', subject: 'Stopped worker' });
    const key = mailMessageKey('stopped', 'stopped@mail.example.test');
    const opKey = f.opKeyOf('stopped', key);
    // The first request reaches the provider but is never accepted nor answered.
    f.sink.scriptFor(f.ownerOf('stopped'), 'hang');
    await f.dovecot.appendMail(FOLDERS.stopped, eml);
    await waitUntil(async () => f.sink.countFor(opKey) === 1 && (await statusOf(opKey)) === 'sending', 'the claim and the first request');
    a.signal('SIGSTOP');

    const b = await worker();
    await waitUntil(async () => (await statusOf(opKey)) === 'sent', 'the second worker to send after the lease', { timeoutMs: 60_000 });
    const sent = await f.rt.operations.get(opKey);
    expect(sent).toMatchObject({ status: 'sent', fence: '2', attempts: 2 });
    // It asked the provider before sending again (the first call may have been taken).
    expect(f.sink.lookups.filter((l) => l.key === opKey)).toEqual([{ key: opKey, found: false }]);

    a.signal('SIGCONT');
    await waitUntil(async () => (await a.metric('singleshot_stale_commits_total')) >= 1, 'the resumed worker to be fenced off', { timeoutMs: 60_000 });
    expect(f.sink.accepted.get(opKey)?.count).toBe(1);
    expect(f.acceptedFor(key)).toHaveLength(1);
    expect(await f.rt.operations.get(opKey)).toMatchObject({ status: 'sent', fence: '2', externalId: sent?.externalId });
    expect((await journalTypes(opKey)).filter((t) => t === 'sent')).toHaveLength(1);
    expect(await b.metric('singleshot_deliveries_total', { result: 'sent' })).toBe(1);
  });

  it('a temporary error before the provider accepted: the retry keeps the same operation key, one effect', async () => {
    await worker();
    const eml = simpleEml({ messageId: '<retry@mail.example.test>', subject: 'Provider 503' });
    const key = mailMessageKey('retry', 'retry@mail.example.test');
    const opKey = f.opKeyOf('retry', key);
    f.sink.scriptFor(f.ownerOf('retry'), { status: 503, body: { error: 'try later' } });
    expect((await f.sendgrid('retry', sendgridRaw(eml))).status).toBe(202);

    await waitUntil(async () => (await statusOf(opKey)) === 'sent', 'the retry to be sent');
    const posts = f.sink.requests.filter((r) => r.recipient === f.ownerOf('retry'));
    expect(posts.map((r) => (typeof r.behaviour === 'object' && 'status' in r.behaviour ? r.behaviour.status : r.behaviour))).toEqual([503, 'ok']);
    expect(posts.map((r) => r.idempotencyKey)).toEqual([opKey, opKey]);
    expect(posts.map((r) => (r.body as { operationKey: string }).operationKey)).toEqual([opKey, opKey]);
    expect(f.sink.accepted.get(opKey)?.count).toBe(1);
    expect(await f.rt.operations.get(opKey)).toMatchObject({ status: 'sent', attempts: 2 });
  });

  it('provider accepted, response lost: reconciled through lookupUrl, not blindly resent', async () => {
    await worker();
    const eml = simpleEml({ messageId: '<lost@mail.example.test>', subject: 'Answer lost' });
    const key = mailMessageKey('lost', 'lost@mail.example.test');
    const opKey = f.opKeyOf('lost', key);
    f.sink.scriptFor(f.ownerOf('lost'), 'accept-then-drop');
    expect((await f.mailgun('lost', mailgunRaw(eml))).status).toBe(202);

    await waitUntil(async () => (await statusOf(opKey)) === 'sent', 'reconciliation');
    expect(f.sink.countFor(opKey)).toBe(1);
    expect(f.sink.lookups.filter((l) => l.key === opKey)).toEqual([{ key: opKey, found: true }]);
    expect(await journalTypes(opKey)).toEqual(['in_doubt', 'sent']);
    expect((await f.rt.operations.get(opKey))?.externalId).toBe(f.sink.accepted.get(opKey)?.id);
    expect((await f.rt.operations.history(opKey)).at(-1)?.note).toBe('reconciled by lookup');
  });
});
