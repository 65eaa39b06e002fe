import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '@singleshot/runtime';
import { spawnApps, startHttpSink, startTestBackend, testConfig, waitForQueuesIdle, waitUntil, writeConfigFile, type AppProcess, type HttpSink, type TestBackend } from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';
import { ingestClient, opOf, outcomeTable, TERMINAL, type CancelAnswer } from './support/lifecycle';

// A cancel that meets a large fan-out: the decision records 100 operations and
// enqueues them while the cancel walks the same list. Whatever the answer says
// of each recipient is what happened to it; a pending answer covers all 100.
const RECIPIENTS = 100;
/** When the cancel leaves, in ms after the event was posted (not awaited): before, during and after the fan-out. */
const OFFSETS = [0, 5, 15, 40, 120];

describe('cancel during a 100-recipient fan-out', () => {
  let redis: TestBackend;
  let sink: HttpSink;
  let fleet: AppProcess;
  let rt: Runtime;
  let base: string;
  let cleanup: () => void;

  beforeAll(async () => {
    redis = await startTestBackend();
    sink = await startHttpSink();
    // A few ms per send, so the fan-out takes a while and cancels meet calls in flight.
    sink.behave(() => ({ delayMs: 5, then: 'ok' }));
    const config = testConfig({
      ...redis.config,
      routes: [{ name: 'announce', match: { source: 'news' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { text: 'News {{data.n}}' } }],
      providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 2000 }] },
    });
    const written = writeConfigFile(config);
    cleanup = written.cleanup;
    fleet = spawnApps('ingest,decision,delivery', written.file);
    base = `http://127.0.0.1:${await fleet.metricsPort()}`;
    rt = await testRuntime(config);
  });

  afterAll(async () => {
    await fleet?.stop();
    await rt?.close();
    await sink?.close();
    await redis?.destroy();
    cleanup?.();
  });

  it.each(OFFSETS)('a cancel %i ms after the post: each of the 100 is sent exactly when the answer allows it', async (offset) => {
    const client = ingestClient(base);
    const id = `fanout-${offset}`;
    const recipients = Array.from({ length: RECIPIENTS }, (_, i) => `m${i}-${id}@x.test`);
    const ops = recipients.map((r) => opOf('news', id, r));
    const posted = client.event({ id, source: 'news', type: 'news.published', recipients, data: { n: id } });
    const answer: CancelAnswer = await new Promise((r) => setTimeout(r, offset)).then(() => client.cancel({ source: 'news', id, reason: 'retracted' }));
    await posted;

    const statuses = new Map<string, string | undefined>();
    await waitUntil(
      async () => {
        for (const op of ops) statuses.set(op, (await rt.operations.get(op))?.status);
        return ops.every((op) => TERMINAL.has(statuses.get(op) ?? ''));
      },
      `the 100 operations of ${id} to be terminal`,
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    await waitForQueuesIdle(rt.queues);

    const listed = new Map(answer.operations.map((o) => [o.operationKey, o.outcome]));
    if (answer.pending) expect(answer.operations).toEqual([]);
    else expect([...listed.keys()].sort()).toEqual([...ops].sort());
    const rows: Array<{ answered: string; final: string }> = [];
    let allowed = 0;
    for (const op of ops) {
      const answered = answer.pending ? 'pending' : (listed.get(op) as string);
      const final = statuses.get(op) as string;
      const accepted = sink.accepted.get(op)?.count ?? 0;
      rows.push({ answered, final });
      if (answered === 'cancelled' || answered === 'pending') {
        expect({ op, final, posted: sink.countFor(op) }).toEqual({ op, final: 'cancelled', posted: 0 });
      } else if (answered === 'already_sent') {
        expect({ op, final, accepted }).toEqual({ op, final: 'sent', accepted: 1 });
      } else {
        expect(answered, `answer for ${op}`).toBe('in_flight');
        expect(['sent', 'cancelled']).toContain(final);
        expect({ op, accepted }).toEqual({ op, accepted: final === 'sent' ? 1 : 0 });
      }
      if (answered === 'already_sent' || (answered === 'in_flight' && final === 'sent')) allowed += 1;
    }
    // The sum: what reached the provider is exactly what the answer let through.
    expect(ops.filter((op) => sink.accepted.has(op)).length).toBe(allowed);
    expect(ops.filter((op) => statuses.get(op) === 'sent').length).toBe(allowed);
    process.stdout.write(`\nfan-out cancel at +${offset} ms (pending: ${answer.pending}):\n${outcomeTable(rows)}`);
  });
});
