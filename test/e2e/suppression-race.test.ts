import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '@singleshot/runtime';
import { Suppressions, readSuppressionAudit } from '@singleshot/store';
import { spawnApps, startHttpSink, startTestBackend, testConfig, waitUntil, writeConfigFile, type AppProcess, type HttpSink, type TestBackend } from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';
import { opOf } from './support/lifecycle';
import { oneEffectProblems } from './support/one-effect';

// Invariant 13 under load: operations whose first attempts the provider
// refuses (503) wait for their retries; meanwhile hard bounces for half of
// their recipients arrive on Postmark's feedback endpoint (each posted three
// times, as a provider retries). The bounce is of an earlier notification to
// the same address on the same channel, correlated by the operation key the
// send carried (Postmark's Metadata), with the address in another case than
// the operation has it. Once the first post of a bounce is answered 200, no
// request for that recipient may reach the provider: the waiting retry is
// stopped by its next claim and ends `suppressed`. The other half is sent
// once each: one effect at the provider (see oneEffectProblems for the one
// repeat under the same key a loaded provider can see).
const OPS = Number(process.env.SUPPRESSION_RACE_OPS ?? 300);
/** Bounces (and events) in flight at once. */
const PARALLEL = 16;
/** What the provider's 503 asks for: long enough for every bounce to be answered while the retries wait, on a machine running the whole suite. */
const RETRY_AFTER_S = Number(process.env.SUPPRESSION_RACE_RETRY_AFTER_S ?? 30);
const PM_USER = 'postmark-hook';
const PM_PASSWORD = 'postmark-race-password';

const recipientOf = (i: number) => `r${i}@race.test`;
const firstOp = (i: number) => opOf('shop', `first-${i}`, recipientOf(i));
const secondOp = (i: number) => opOf('shop', `second-${i}`, recipientOf(i));

/** Runs `work` over 0..count-1 with `PARALLEL` at once. */
async function parallel(count: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: PARALLEL }, async () => {
    while (next < count) await work(next++);
  }));
}

describe('hard bounces racing waiting retries', () => {
  let redis: TestBackend;
  let sink: HttpSink;
  let front: AppProcess;
  const deliveries: AppProcess[] = [];
  let rt: Runtime;
  let base: string;
  let cleanup: () => void;

  beforeAll(async () => {
    redis = await startTestBackend();
    sink = await startHttpSink();
    const config = testConfig({
      ...redis.config,
      routes: [{ name: 'orders', match: { source: 'shop' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { text: 'Order {{data.n}}' } }],
      providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 1500 }] },
      // Retries within seconds, many of them (a bounced recipient's provider keeps refusing until its bounce is answered);
      // no breaker: the 503s are the point, not a provider outage to skip.
      delivery: { leaseMs: 5000, attempts: 60, backoffMs: [1500], providerAttempts: 1000, breaker: { failureThreshold: 1_000_000 }, concurrency: 16, metricsPort: 0 },
      feedback: { postmark: { username: PM_USER, password: PM_PASSWORD } },
    });
    const written = writeConfigFile(config);
    cleanup = written.cleanup;
    front = spawnApps('ingest,decision', written.file);
    deliveries.push(spawnApps('delivery', written.file), spawnApps('delivery', written.file));
    base = `http://127.0.0.1:${await front.metricsPort()}`;
    await Promise.all(deliveries.map((d) => d.metricsPort()));
    rt = await testRuntime(config);
  });

  afterAll(async () => {
    await Promise.all([front, ...deliveries].map((p) => p?.stop()));
    await rt?.close();
    await sink?.close();
    await redis?.destroy();
    cleanup?.();
  });

  const post = async (id: string, i: number) => {
    const res = await fetch(`${base}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ source: 'shop', id, type: 'order', recipients: [recipientOf(i)], data: { n: i } }) });
    expect(res.status, await res.text()).toBe(202);
  };
  const statuses = (keys: string[]) => Promise.all(keys.map(async (k) => (await rt.operations.get(k))?.status));

  it(`${OPS} operations retrying after 503s; hard bounces for half of the recipients: none is sent to after its bounce is answered`, { timeout: 60_000 + OPS * 300 }, async () => {
    const started = Date.now();
    const bounced = new Set(Array.from({ length: OPS }, (_, i) => i).filter((i) => i % 2 === 0));
    const firsts = Array.from({ length: OPS }, (_, i) => firstOp(i));
    const seconds = Array.from({ length: OPS }, (_, i) => secondOp(i));

    // 1. One notification per recipient that goes through: the one the bounce will be about.
    await parallel(OPS, (i) => post(`first-${i}`, i));
    await waitUntil(async () => (await statuses(firsts)).every((s) => s === 'sent'), 'the first notifications sent', { timeoutMs: 30_000 + OPS * 100, intervalMs: 250 });

    // 2. The next ones meet a refusing provider: the kept half twice, then accepted;
    // a bounced recipient's until its bounce is answered (then accepted: a send after the answer would show).
    const answeredAt = new Map<string, number>();
    const postedAt = new Map<string, number>();
    for (let i = 0; i < OPS; i++) if (!bounced.has(i)) sink.scriptFor(recipientOf(i), { status: 503 }, { status: 503 });
    // The refusal asks for a retry after RETRY_AFTER_S: the retry waits (not in flight) while the bounces land.
    sink.behave((req) => (req.recipient && bounced.has(Number(req.recipient.slice(1).split('@')[0])) && !answeredAt.has(req.recipient) ? { status: 503, headers: { 'retry-after': String(RETRY_AFTER_S) } } : 'ok'));
    const from = sink.requests.length;
    await parallel(OPS, (i) => post(`second-${i}`, i));
    // Every bounced recipient's operation has been refused once: its retry waits.
    await waitUntil(
      () => [...bounced].every((i) => sink.requests.some((r, n) => n >= from && r.idempotencyKey === seconds[i])),
      'a refused first attempt of every operation to a bounced recipient',
      { timeoutMs: 30_000 + OPS * 100, intervalMs: 100 },
    );

    // 3. The bounces, each posted three times; the first answer's time is the line nothing may cross.
    const auth = `Basic ${Buffer.from(`${PM_USER}:${PM_PASSWORD}`).toString('base64')}`;
    const tallies: Array<{ recorded: number; duplicate: number }> = [];
    await parallel(bounced.size, async (n) => {
      const i = [...bounced][n] as number;
      const body = JSON.stringify({
        RecordType: 'Bounce', ID: 900_000 + i, Type: 'HardBounce', TypeCode: 1, MessageID: `pm-${i}`,
        // The address as the receiving server spelled it; the operation has it lower-cased.
        Email: recipientOf(i).toUpperCase(),
        Metadata: { 'singleshot-operation': firsts[i] },
        Details: 'smtp;550 5.1.1 user unknown', BouncedAt: new Date().toISOString(),
      });
      const send = async () => {
        const res = await fetch(`${base}/v1/feedback/postmark`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: auth }, body });
        expect(res.status).toBe(200);
        return (await res.json()) as { recorded: number; duplicate: number };
      };
      postedAt.set(recipientOf(i), Date.now());
      tallies.push(await send());
      answeredAt.set(recipientOf(i), Date.now());
      tallies.push(...(await Promise.all([send(), send()])));
    });
    // What the test stands on: each bounce was answered while its operation's retry waited.
    const firstRefusal = (i: number) => sink.requests.find((r, n) => n >= from && r.idempotencyKey === seconds[i])?.receivedAt as number;
    const slow = [...bounced].filter((i) => (answeredAt.get(recipientOf(i)) as number) >= firstRefusal(i) + RETRY_AFTER_S * 1000);
    expect(slow, `bounces answered after the retry was due (raise SUPPRESSION_RACE_RETRY_AFTER_S)`).toEqual([]);
    expect(tallies.reduce((a, t) => a + t.recorded, 0)).toBe(bounced.size);
    expect(tallies.reduce((a, t) => a + t.duplicate, 0)).toBe(2 * bounced.size);

    // 4. Every operation ends: the kept half sent, the bounced half suppressed.
    await waitUntil(async () => (await statuses(seconds)).every((s) => s === 'sent' || s === 'suppressed' || s === 'dead'), 'every operation to end', { timeoutMs: 60_000 + OPS * 200, intervalMs: 250 });
    const records = await Promise.all(seconds.map((k) => rt.operations.get(k)));
    const late: string[] = [];
    const wrong: string[] = [];
    let refusedBefore = 0;
    for (let i = 0; i < OPS; i++) {
      const requests = sink.requests.filter((r, n) => n >= from && r.idempotencyKey === seconds[i]);
      if (bounced.has(i)) {
        const line = answeredAt.get(recipientOf(i)) as number;
        late.push(...requests.filter((r) => r.receivedAt > line).map((r) => `${recipientOf(i)}: request ${r.receivedAt - line} ms after the 200 (bounce posted ${line - (postedAt.get(recipientOf(i)) as number)} ms before it), ${JSON.stringify(records[i])}`));
        refusedBefore += requests.length;
        if (sink.accepted.has(seconds[i] as string) || records[i]?.status !== 'suppressed') wrong.push(`${recipientOf(i)}: ${JSON.stringify(records[i])} accepted=${sink.accepted.has(seconds[i] as string)}`);
      } else {
        expect(records[i], recipientOf(i)).toMatchObject({ status: 'sent' });
      }
    }
    // Sent once each: one effect at the provider, a repeat under the same key only as oneEffectProblems allows it.
    const once = [...firsts, ...seconds.filter((_, i) => !bounced.has(i))] as string[];
    const problems: string[] = [];
    let absorbed = 0;
    for (const key of once) {
      const accepted = sink.accepted.get(key);
      if ((accepted?.count ?? 0) > 1) absorbed += 1;
      problems.push(...oneEffectProblems({
        key,
        record: await rt.operations.get(key),
        history: await rt.operations.history(key),
        posts: sink.requests.filter((r) => r.idempotencyKey === key),
        accepted,
        lookups: sink.lookups.filter((l) => l.key === key),
      }));
    }
    expect(problems).toEqual([]);
    if (late.length > 0) {
      const audit = await readSuppressionAudit(rt.redis, rt.keys, { limit: 1000 });
      for (const line of late) {
        const r = line.split(':')[0] as string;
        const i = Number(r.slice(1).split('@')[0]);
        const added = audit.find((e) => e.recipient === r && e.change === 'add');
        const history = JSON.stringify(await rt.operations.history(seconds[i] as string));
        const received = sink.requests.filter((q) => q.idempotencyKey === seconds[i]).map((q) => q.receivedAt);
        process.stdout.write(`${r}: posted ${postedAt.get(r)}, audited ${added?.at}, answered ${answeredAt.get(r)}, requests ${received.join(',')}, history ${history}\n`);
      }
    }
    expect(late).toEqual([]);
    expect(wrong).toEqual([]);
    for (const i of bounced) expect(records[i], recipientOf(i)).toMatchObject({ status: 'suppressed', reason: 'recipient_suppressed' });

    // The suppressions themselves: (the operation's channel, its recipient), from the bounce, once each.
    const suppressions = new Suppressions(rt.redis, rt.keys, { retentionMs: rt.retentionMs });
    for (let i = 0; i < OPS; i++) {
      const { suppressions: list } = await suppressions.get(recipientOf(i));
      if (bounced.has(i)) expect(list).toMatchObject([{ channel: 'webhook', reason: 'hard_bounce', origin: 'bounce', by: `feedback:postmark:Bounce:${900_000 + i}` }]);
      else expect(list).toEqual([]);
    }
    const audit = await readSuppressionAudit(rt.redis, rt.keys, { limit: 1000 });
    expect(audit.filter((e) => e.change === 'add').length).toBe(bounced.size);
    expect(await front.metric('singleshot_suppressions_total', { reason: 'hard_bounce' })).toBe(bounced.size);

    const suppressedAfter = records.filter((r, i) => bounced.has(i) && r?.status === 'suppressed').length;
    process.stdout.write(
      `\nsuppression race: ${OPS} operations, ${bounced.size} bounced (posted 3x each), ${refusedBefore} refused attempts to bounced recipients before their bounce was answered, ` +
        `${late.length} requests after the answer, ${suppressedAfter} ended suppressed, ${OPS - bounced.size} sent once; ` +
        `${absorbed} of ${once.length} sent operations POSTed again under their key after an in-doubt attempt (absorbed by the key); ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
  });
});
