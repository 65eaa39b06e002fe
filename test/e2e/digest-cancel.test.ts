import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestGroupId, digestId, eventMessageKey } from '@singleshot/core';
import type { Runtime } from '@singleshot/runtime';
import { CLI_MAIN, REPO_ROOT, spawnApps, startHttpSink, startTestBackend, testConfig, waitUntil, writeConfigFile, type AppProcess, type HttpSink, type TestBackend } from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';
import { ingestClient } from './support/lifecycle';
import { digestRoute, sinkDigests } from './support/digests';

// A cancel that comes after its event joined a digest, against real ingest,
// decision and delivery processes: out of the open digest with the answer
// `cancelled`; left in a digest that closed, with its flush's answer; a digest
// whose every member was cancelled sends nothing. Then what `messages show`
// and `ops show` say of a digest and its members.

describe('cancelling digest members', () => {
  let redis: TestBackend;
  let sink: HttpSink;
  let apps: AppProcess;
  let rt: Runtime;
  let configFile: string;
  let cleanup: () => void;
  let client: ReturnType<typeof ingestClient>;
  const config = () =>
    testConfig({
      ...redis.config,
      routes: [
        // An hour's window: only maxItems closes these during the test, so each step's order is the test's.
        digestRoute('capped', 'cap', { window: '1h', maxItems: 3 }),
        digestRoute('pair', 'pair', { window: '1h', maxItems: 2 }),
        digestRoute('short', 'short', { window: '4s' }),
        digestRoute('race', 'race', { window: '2s', mode: 'aligned' }),
      ],
      providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 1500 }] },
    });

  beforeAll(async () => {
    redis = await startTestBackend();
    sink = await startHttpSink();
    const written = writeConfigFile(config());
    configFile = written.file;
    cleanup = written.cleanup;
    apps = spawnApps('ingest,decision,delivery', written.file);
    client = ingestClient(`http://127.0.0.1:${await apps.metricsPort()}`);
    rt = await testRuntime(config());
  });

  afterAll(async () => {
    await apps?.stop();
    await rt?.close();
    await sink?.close();
    await redis?.destroy();
    cleanup?.();
  });

  const post = (source: string, id: string, recipient: string) => client.event({ id, source, type: 'update', recipients: [recipient], data: {} });
  const digestsFor = (recipient: string) => sinkDigests(sink).filter((d) => d.recipient === recipient);
  const joined = (group: string, count: number) => waitUntil(async () => (await rt.digests.openState(group))?.count === count, `${count} member(s) joined`, { timeoutMs: 20_000 });
  function cli(...args: string[]): unknown {
    const r = spawnSync(process.execPath, [CLI_MAIN, ...args, '--json', '--config', configFile], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000 });
    if (r.status !== 0) throw new Error(`singleshot ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    return JSON.parse(r.stdout) as unknown;
  }

  it('a cancel after its event joined takes it out of the open digest; the digest goes without it, and the same event posted again stays out', { timeout: 60_000 }, async () => {
    const group = digestGroupId('capped', 'open@x.test', '');
    await post('cap', 'c-1', 'open@x.test');
    await post('cap', 'c-2', 'open@x.test');
    await joined(group, 2);
    const answer = await client.cancel({ source: 'cap', id: 'c-1', reason: 'withdrawn' });
    expect(answer.pending).toBe(false);
    expect(answer.operations).toEqual([
      { operationKey: '', recipient: 'open@x.test', channel: 'webhook', outcome: 'cancelled', digest: { route: 'capped', key: '', group, id: digestId(group, 1) } },
    ]);
    // The same event again (an at-least-once producer): a duplicate at ingest, and never a member again.
    await post('cap', 'c-1', 'open@x.test');
    await post('cap', 'c-3', 'open@x.test');
    await post('cap', 'c-4', 'open@x.test');
    const [digest] = await sink.waitFor(() => (digestsFor('open@x.test').length > 0 ? digestsFor('open@x.test') : undefined), { timeoutMs: 20_000, what: 'the digest' });
    expect(digest?.ids).toEqual(['c-2', 'c-3', 'c-4']);
    expect(digest?.accepted).toBe(1);

    const shown = cli('messages', 'show', eventMessageKey('cap', 'c-1')) as { digests: Array<{ state: string; id?: string }> };
    expect(shown.digests).toMatchObject([{ state: 'removed', id: digestId(group, 1) }]);
  });

  it('a cancel of a member whose digest closed leaves it in: the answer is its flush operation, already_sent once sent', { timeout: 60_000 }, async () => {
    await post('pair', 'p-1', 'pair@x.test');
    await post('pair', 'p-2', 'pair@x.test');
    const [digest] = await sink.waitFor(() => (digestsFor('pair@x.test').length > 0 ? digestsFor('pair@x.test') : undefined), { timeoutMs: 20_000, what: 'the digest' });
    const flushOp = digest?.operationKey as string;
    await waitUntil(async () => (await rt.operations.get(flushOp))?.status === 'sent', 'the flush committed sent', { timeoutMs: 20_000 });
    const answer = await client.cancel({ source: 'pair', id: 'p-1' });
    expect(answer.operations).toMatchObject([{ operationKey: flushOp, outcome: 'already_sent', recipient: 'pair@x.test' }]);
    expect(digest?.ids).toEqual(['p-1', 'p-2']);

    const group = digestGroupId('pair', 'pair@x.test', '');
    const id = digestId(group, 1);
    const member = cli('messages', 'show', eventMessageKey('pair', 'p-2')) as { digests: Array<{ state: string; id: string; operationKey: string; route: string }> };
    expect(member.digests).toMatchObject([{ state: 'closed', id, operationKey: flushOp, route: 'pair' }]);
    const shown = cli('ops', 'show', id) as { digest: { members: string[]; reason: string; operationKey: string }; operation: { status: string } };
    expect(shown.digest).toMatchObject({ members: [eventMessageKey('pair', 'p-1'), eventMessageKey('pair', 'p-2')], reason: 'max_items', operationKey: flushOp });
    expect(shown.operation.status).toBe('sent');
    // From the flush operation's side, the same digest.
    expect((cli('ops', 'show', flushOp) as { digest: { id: string } }).digest.id).toBe(id);
  });

  it('a digest whose every member was cancelled closes empty and sends nothing; the next event opens the next digest', { timeout: 60_000 }, async () => {
    const group = digestGroupId('short', 'empty@x.test', '');
    await post('short', 's-1', 'empty@x.test');
    await joined(group, 1);
    expect((await client.cancel({ source: 'short', id: 's-1' })).operations).toMatchObject([{ outcome: 'cancelled' }]);
    const first = digestId(group, 1);
    const record = await waitUntil(async () => (await rt.digestRecords.read(first)) ?? undefined, 'the empty digest closed', { timeoutMs: 20_000 });
    expect(record).toMatchObject({ state: 'empty', members: [], operationKey: '' });
    await post('short', 's-2', 'empty@x.test');
    const digests = await sink.waitFor(() => (digestsFor('empty@x.test').length > 0 ? digestsFor('empty@x.test') : undefined), { timeoutMs: 20_000, what: 'the next digest' });
    expect(digests.map((d) => d.ids)).toEqual([['s-2']]);
    expect(sink.requests.filter((r) => (r.body as { recipient?: string })?.recipient === 'empty@x.test')).toHaveLength(1);
  });

  it('cancels racing their events into digests: each answer holds at the sink (cancelled or pending: in no digest; digest_closed or already_sent: in its digest once; the rest once)', { timeout: 120_000 }, async () => {
    const events = Array.from({ length: Number(process.env.DIGEST_CANCEL_EVENTS ?? 240) }, (_, i) => ({ id: `r-${i}`, to: `r${i % 12}@x.test` }));
    const cancelled = events.filter((_, i) => i % 3 === 0);
    const answers = new Map<string, string>();
    // Each cancel goes at a random point of its event's posting: before, during or after its join.
    await Promise.all(
      events.map(async (e, i) => {
        const cancel = i % 3 === 0 ? async () => answers.set(e.id, (await client.cancel({ source: 'race', id: e.id })).operations[0]?.outcome ?? 'pending') : undefined;
        const posts = [post('race', e.id, e.to), post('race', e.id, e.to)];
        if (cancel) {
          // Half within the first 40 ms (before or around the join), half up to 3 s later (some after their 2 s window closed).
          await new Promise((r) => setTimeout(r, Math.floor(Math.random() * (i % 2 === 0 ? 40 : 3_000))));
          await cancel();
        }
        await Promise.all(posts);
      }),
    );
    // Settled: no digest open, every flush at the sink ended.
    await waitUntil(async () => (await rt.digests.openCount()) === 0, 'every digest closed', { timeoutMs: 60_000 });
    const raceDigests = () => sinkDigests(sink).filter((d) => d.recipient.startsWith('r') && d.ids.every((id) => id.startsWith('r-')));
    const expected = events.filter((e) => !['cancelled', 'pending'].includes(answers.get(e.id) ?? 'live')).length;
    await sink.waitFor(() => raceDigests().reduce((n, d) => n + d.ids.length, 0) >= expected || undefined, { timeoutMs: 60_000, what: `${expected} items at the sink` });
    const seen = new Map<string, number>();
    for (const d of raceDigests()) {
      expect(d.accepted).toBe(1);
      for (const id of d.ids) seen.set(id, (seen.get(id) ?? 0) + 1);
    }
    const wrong = events.filter((e) => {
      const answer = answers.get(e.id);
      const times = seen.get(e.id) ?? 0;
      return answer === 'cancelled' || answer === 'pending' ? times !== 0 : times !== 1;
    });
    const tally = [...answers.values()].reduce<Record<string, number>>((t, a) => ({ ...t, [a]: (t[a] ?? 0) + 1 }), {});
    process.stdout.write(`[digest-cancel race] ${events.length} events, ${cancelled.length} cancelled: answers ${JSON.stringify(tally)}; ${raceDigests().length} digests, ${seen.size} distinct items at the sink; ${wrong.length} answers broken\n`);
    expect(wrong.map((e) => `${e.id}: ${answers.get(e.id) ?? 'not cancelled'}, ${seen.get(e.id) ?? 0}x`)).toEqual([]);
  });
});
