import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventMessageKey, operationKey, parseAction } from '@singleshot/core';
import type { Runtime } from '@singleshot/runtime';
import { spawnApps, startSmtpSink, startTestRedis, testConfig, waitUntil, writeConfigFile, type AppProcess, type SmtpSink, type TestRedis } from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';

// A PUT of preferences against operations already scheduled: 200 `news`
// operations for four recipients, due 5 to 8 s ahead, then one PUT per
// recipient opting out of `news` by email. Once the PUTs have answered, none
// of the 200 may reach the SMTP sink; every one ends suppressed (opted_out).
// Twenty operations of a recipient who did not opt out, scheduled alike,
// are sent: the sink and the schedule work, so the silence means something.
const OPTED = ['a@example.test', 'b@example.test', 'c@example.test', 'd@example.test'];
const CONTROL = 'keep@example.test';
const PER_OPTED = 50;
const CONTROLS = 20;
const HEAD_START_MS = 20_000;

describe('preferences against scheduled operations', () => {
  let redis: TestRedis;
  let smtp: SmtpSink;
  let fleet: AppProcess;
  let rt: Runtime;
  let base: string;
  let cleanup: () => void;

  beforeAll(async () => {
    [redis, smtp] = await Promise.all([startTestRedis(), startSmtpSink()]);
    const config = testConfig({
      redisUrl: redis.url,
      routes: [{ name: 'newsletter', match: { source: 'news' }, action: 'notify', channel: 'email', recipients: 'event', category: 'news', template: { subject: 'News {{data.n}}', text: 'This week.' } }],
      providers: { email: [{ name: 'relay', type: 'smtp', host: '127.0.0.1', port: smtp.port, secure: false, from: 'news@example.test' }] },
    });
    const written = writeConfigFile(config);
    cleanup = written.cleanup;
    fleet = spawnApps('ingest,decision,delivery', written.file);
    base = `http://127.0.0.1:${await fleet.metricsPort()}`;
    rt = await testRuntime(config, 'preferences-race');
  }, 30_000);

  afterAll(async () => {
    await fleet?.stop();
    await rt?.close();
    await smtp?.close();
    await redis?.destroy();
    cleanup?.();
  });

  it('no opted-out operation is sent after the PUT; all 200 end suppressed (opted_out)', async () => {
    const start = Date.now();
    const events = [
      ...OPTED.flatMap((recipient, r) => Array.from({ length: PER_OPTED }, (_, i) => ({ id: `o-${r}-${i}`, recipient }))),
      ...Array.from({ length: CONTROLS }, (_, i) => ({ id: `k-${i}`, recipient: CONTROL })),
    // The head start covers posting and deciding 220 events before the PUT, which takes seconds on a machine
    // running the whole suite in parallel; the sends then fall due over the next 3 s, after the PUT.
    ].map((e, i) => ({ ...e, sendAt: start + HEAD_START_MS + ((i * 7_919) % 3_000) }));
    const opOf = (e: { id: string; recipient: string }) => operationKey({ messageKey: eventMessageKey('news', e.id), action: parseAction('notify'), recipient: e.recipient, channel: 'email' });
    for (let i = 0; i < events.length; i += 50) {
      await Promise.all(
        events.slice(i, i + 50).map(async (e) => {
          const res = await fetch(`${base}/v1/events`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ id: e.id, source: 'news', type: 'weekly', recipients: [e.recipient], data: { n: e.id }, sendAt: new Date(e.sendAt).toISOString() }),
          });
          expect(res.status, await res.text()).toBe(202);
        }),
      );
    }
    // Every opted-out operation exists (decided, scheduled) before the PUT: the PUT races the schedule, not the decision.
    const opted = events.filter((e) => e.recipient !== CONTROL);
    await waitUntil(async () => (await rt.operations.summaries(opted.map(opOf))).every((s) => s.status === 'scheduled') || undefined, 'the 200 operations to be scheduled', { timeoutMs: HEAD_START_MS });
    await Promise.all(
      OPTED.map(async (recipient) => {
        const res = await fetch(`${base}/v1/preferences/${encodeURIComponent(recipient)}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ optOuts: [{ channel: 'email', category: 'news' }] }) });
        expect(res.status).toBe(200);
        expect(await res.json()).toEqual({ recipient, optOuts: [{ channel: 'email', category: 'news' }], version: 1 });
      }),
    );
    const answeredAt = Date.now();
    // A precondition, not a timing claim: were the PUTs answered after the first send was due, the race would not be the one tested.
    const firstDue = Math.min(...opted.map((e) => e.sendAt));
    if (answeredAt >= firstDue) throw new Error(`the PUTs answered ${answeredAt - firstDue} ms after the first operation was due: the test machine is too slow for this schedule`);

    const all = events.map(opOf);
    const finals = await waitUntil(
      async () => {
        const summaries = await rt.operations.summaries(all);
        return summaries.every((s) => s.status === 'sent' || s.status === 'suppressed' || s.status === 'dead') ? summaries : undefined;
      },
      'every operation to end',
      { timeoutMs: 40_000 },
    );
    const byRecipient = new Map<string, string[]>();
    for (const s of finals) byRecipient.set(`${s.recipient}`, [...(byRecipient.get(`${s.recipient}`) ?? []), `${s.status}/${s.reason ?? ''}`]);
    for (const recipient of OPTED) expect(byRecipient.get(recipient), recipient).toEqual(Array.from({ length: PER_OPTED }, () => 'suppressed/opted_out'));
    expect(byRecipient.get(CONTROL)?.every((s) => s.startsWith('sent/'))).toBe(true);
    expect(smtp.messages.filter((m) => OPTED.some((r) => m.envelope.to.includes(r)))).toHaveLength(0);
    expect(smtp.messages.filter((m) => m.envelope.to.includes(CONTROL))).toHaveLength(CONTROLS);
    process.stdout.write(`\npreferences race: ${opted.length} opted-out operations suppressed, ${CONTROLS} control operations sent; PUTs answered ${firstDue - answeredAt} ms before the first was due\n`);
  }, 120_000);
});
