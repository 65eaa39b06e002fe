import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '@singleshot/runtime';
import { spawnApps, startHttpSink, startTestBackend, testConfig, writeConfigFile, type AppProcess, type HttpSink, type TestBackend } from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';
import { ingestClient } from './support/lifecycle';
import { appearances, sinkDigests } from './support/digests';

// A route's window changes while digests are open: the decision restarts with
// the new config, and the open digests close on the schedule stored when they
// opened, each once, with every member.
// Long enough that the decision's restart and the later posts land inside the
// open digests even on a slow machine (they must join them, not open new ones).
const ORIGINAL_WINDOW = '20s';

describe('digest window change while digests are open', () => {
  let redis: TestBackend;
  let sink: HttpSink;
  let front: AppProcess;
  let decision: AppProcess;
  let rt: Runtime;
  const cleanups: Array<() => void> = [];
  const configOf = (window: string) =>
    testConfig({
      ...redis.config,
      routes: [{ name: 'stock', match: { source: 'stock' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { text: '{{count}}' }, digest: { window } }],
      providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 1500 }] },
    });

  beforeAll(async () => {
    redis = await startTestBackend();
    sink = await startHttpSink();
    const written = writeConfigFile(configOf(ORIGINAL_WINDOW));
    cleanups.push(written.cleanup);
    front = spawnApps('ingest,delivery', written.file);
    decision = spawnApps('decision', written.file);
    await decision.metricsPort();
    rt = await testRuntime(configOf(ORIGINAL_WINDOW));
  });

  afterAll(async () => {
    await Promise.all([front, decision].map((p) => p?.stop()));
    await rt?.close();
    await sink?.close();
    await redis?.destroy();
    for (const c of cleanups) c();
  });

  it('open digests close on their original schedule after the window grows from 20s to 10m; none closes twice, none is lost', { timeout: 120_000 }, async () => {
    const client = ingestClient(`http://127.0.0.1:${await front.metricsPort()}`);
    const recipients = ['a@x.test', 'b@x.test', 'c@x.test'];
    const post = (id: string, recipient: string) => client.event({ id, source: 'stock', type: 'moved', recipients: [recipient], data: { n: id } });
    await Promise.all(recipients.flatMap((r, i) => [1, 2, 3].map((n) => post(`before-${i}-${n}`, r))));
    let open = await rt.digests.listOpen();
    for (let i = 0; open.length < 3 && i < 100; i++) {
      await new Promise((r) => setTimeout(r, 100));
      open = await rt.digests.listOpen();
    }
    expect(open).toHaveLength(3);
    const scheduled = new Set(open.map((d) => d.closeAt));

    decision.signal('SIGKILL');
    await decision.exited();
    const changed = writeConfigFile(configOf('10m'));
    cleanups.push(changed.cleanup);
    decision = spawnApps('decision', changed.file);
    await decision.metricsPort();
    await Promise.all(recipients.map((r, i) => post(`after-${i}`, r)));

    const digests = await sink.waitFor(() => (sinkDigests(sink).length >= 3 ? sinkDigests(sink) : undefined), { timeoutMs: 60_000, what: 'the three digests' });
    expect(digests.map((d) => d.closeAt).every((t) => scheduled.has(t))).toBe(true);
    expect(digests.filter((d) => d.accepted !== 1)).toEqual([]);
    const seen = appearances(digests);
    const ids = recipients.flatMap((_, i) => [...[1, 2, 3].map((n) => `before-${i}-${n}`), `after-${i}`]);
    expect(ids.filter((id) => seen.get(id) !== 1)).toEqual([]);
    expect(digests).toHaveLength(3);
    expect(await rt.digests.openCount()).toBe(0);
  });
});
