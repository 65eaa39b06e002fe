import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { DeliverJobData } from '@singleshot/core';
import { enqueueDeliveries } from '@singleshot/queues';
import type { Runtime } from '@singleshot/runtime';
import {
  CLI_MAIN,
  REPO_ROOT,
  spawnApps,
  startHttpSink,
  startTestRedis,
  testConfig,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type HttpSink,
  type TestRedis,
} from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';
import { deliverJob, hexKey } from '@singleshot/test-jobs';

// The DLQ and replay through the real CLI (`singleshot dlq …`) against a real
// delivery process: replay reuses the operation key, sends once, journals who,
// and a replay of an operation that meanwhile got sent sends nothing.
const run = promisify(execFile);
let redis: TestRedis;
let sink: HttpSink;
let rt: Runtime;
let fleet: AppProcess;
let configFile: string;
let cleanup: () => void;

function job(name: string): DeliverJobData {
  return deliverJob(name, { subject: `s ${name}`, text: `t ${name}` });
}

async function cli(...args: string[]): Promise<{ stdout: string; code: number }> {
  try {
    const { stdout } = await run(process.execPath, [CLI_MAIN, 'dlq', ...args, '--config', configFile], { cwd: REPO_ROOT, env: { ...process.env, LOG_LEVEL: 'warn' } });
    return { stdout, code: 0 };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; code?: number };
    if (typeof e.code !== 'number') throw err;
    return { stdout: `${e.stdout ?? ''}${e.stderr ?? ''}`, code: e.code };
  }
}

const json = async <T>(...args: string[]): Promise<T> => JSON.parse((await cli(...args, '--json')).stdout) as T;
const status = async (key: string) => (await rt.operations.get(key))?.status;
const journal = async (key: string) => {
  const record = await rt.operations.get(key);
  return rt.journal.forOperation(key, record?.journalIds ?? []);
};

async function killWith(data: DeliverJobData, ...behaviours: Parameters<HttpSink['scriptFor']>[1][]): Promise<void> {
  sink.scriptFor(data.recipient, ...behaviours);
  await enqueueDeliveries(rt.queues, [data]);
  await waitUntil(() => rt.queues.dead.getJob(data.operationKey), `${data.recipient} in the DLQ`, { timeoutMs: 60_000 });
}

beforeAll(async () => {
  redis = await startTestRedis();
  sink = await startHttpSink();
  const config = testConfig({
    redisUrl: redis.url,
    delivery: { leaseMs: 2000, attempts: 2, backoffMs: [50], concurrency: 4, metricsPort: 0, sweepIntervalMs: 500 },
    routes: [{ name: 'test', match: {}, action: 'notify', channel: 'webhook' }],
    providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 5000 }] },
  });
  const written = writeConfigFile(config);
  configFile = written.file;
  cleanup = written.cleanup;
  rt = await testRuntime(config);
  fleet = spawnApps('delivery', configFile);
  await fleet.metricsPort();
});

afterAll(async () => {
  await fleet?.stop();
  await rt?.close();
  await sink?.close();
  await redis?.destroy();
  cleanup?.();
});

describe('dlq list / show / replay', () => {
  it('lists a dead operation with its reason, shows its full context, and replays it once with who', async () => {
    const data = job('rejected');
    await killWith(data, { status: 422, body: { error: 'invalid recipient' } });

    const listed = await json<{ dead: { operationKey: string; reason: string; error: { code: string }; attempts: unknown[] }[] }>('list');
    expect(listed.dead).toEqual([expect.objectContaining({ operationKey: data.operationKey, reason: 'permanent', error: expect.objectContaining({ code: 'HTTP_422' }) })]);
    expect(listed.dead[0]?.attempts).toHaveLength(1);
    const table = (await cli('list')).stdout;
    expect(table).toMatch(/DIED\s+OPERATION\s+CHANNEL\s+RECIPIENT\s+REASON/);
    expect(table).toContain(data.operationKey);
    const shown = (await cli('show', data.operationKey)).stdout;
    expect(shown).toContain('HTTP_422');
    expect(shown).toContain(`s rejected`);

    // The recipient is fixed now: the sink accepts.
    const replayed = await cli('replay', data.operationKey, '--by', 'alice');
    expect(replayed.code).toBe(0);
    expect(replayed.stdout).toMatch(new RegExp(`replayed\\s+${data.operationKey}`));
    await waitUntil(async () => (await status(data.operationKey)) === 'sent', 'the replayed operation to be sent', { timeoutMs: 60_000 });
    expect(sink.accepted.get(data.operationKey)?.count).toBe(1);
    expect(sink.countFor(data.operationKey)).toBe(2); // the 422, then the accepted one
    expect((await json<{ dead: unknown[] }>('list')).dead).toEqual([]);
    const entries = await journal(data.operationKey);
    expect(entries.map((e) => e.type)).toEqual(['dead', 'replayed', 'sent']);
    expect(entries[1]?.fields).toMatchObject({ by: 'alice', via: 'cli', from: 'dead' });
    expect(await fleet.metric('singleshot_dead_total', { reason: 'permanent' })).toBe(1);
  });

  it('a replay of an operation that meanwhile got sent reports "already sent" and sends nothing', async () => {
    const data = job('twice');
    await killWith(data, { status: 422 });
    expect((await cli('replay', data.operationKey, '--by', 'alice')).code).toBe(0);
    await waitUntil(async () => (await status(data.operationKey)) === 'sent', 'the first replay to be sent', { timeoutMs: 60_000 });
    const posts = sink.countFor(data.operationKey);
    const before = await rt.queues.deliver.getJob(data.operationKey);
    await waitUntil(async () => (await before?.getState()) === 'completed', 'the replayed job to complete');

    const again = await cli('replay', data.operationKey, '--by', 'bob');
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/already sent/);
    expect(again.stdout).toMatch(/nothing sent/);
    // Nothing was put back in the queue: the job is the same finished one.
    const after = await rt.queues.deliver.getJob(data.operationKey);
    expect(await after?.getState()).toBe('completed');
    expect(after?.timestamp).toBe(before?.timestamp);
    expect(sink.countFor(data.operationKey)).toBe(posts);
    expect(sink.accepted.get(data.operationKey)?.count).toBe(1);
    expect((await journal(data.operationKey)).map((e) => e.type)).toEqual(['dead', 'replayed', 'sent']);
  });

  it('--filter replays only the matching reason; --all replays the rest; unknown keys are reported', async () => {
    const permanent = job('filter-permanent');
    const exhausted = job('filter-exhausted');
    await killWith(permanent, { status: 422 });
    await killWith(exhausted, { status: 503 }, { status: 503 });
    const reasons = (await json<{ dead: { operationKey: string; reason: string }[] }>('list')).dead.map((d) => [d.operationKey, d.reason]);
    expect(reasons).toEqual(expect.arrayContaining([[permanent.operationKey, 'permanent'], [exhausted.operationKey, 'attempts_exhausted']]));

    const filtered = await json<{ results: { operationKey: string; result: string }[]; by: string }>('replay', '--filter', 'permanent', '--by', 'carol');
    expect(filtered.results).toEqual([{ operationKey: permanent.operationKey, result: 'replayed', from: 'dead', journalId: expect.any(String), job: 'added' }]);
    await waitUntil(async () => (await status(permanent.operationKey)) === 'sent', 'the filtered replay to be sent', { timeoutMs: 60_000 });
    expect(await status(exhausted.operationKey)).toBe('dead');

    const all = await json<{ results: { operationKey: string; result: string }[] }>('replay', '--all', '--by', 'carol');
    expect(all.results.map((r) => [r.operationKey, r.result])).toEqual([[exhausted.operationKey, 'replayed']]);
    await waitUntil(async () => (await status(exhausted.operationKey)) === 'sent', 'the --all replay to be sent', { timeoutMs: 60_000 });
    expect(sink.accepted.get(exhausted.operationKey)?.count).toBe(1);

    const missing = await cli('replay', hexKey('never-existed'));
    expect(missing.code).toBe(1);
    expect(missing.stdout).toMatch(/not found/);
    expect(await fleet.metric('singleshot_dlq_depth')).toBe(0);
  });
});
