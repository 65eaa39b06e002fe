import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestGroupId, digestId, eventMessageKey, operationKey, parseAction } from '@singleshot/core';
import { enqueueDigestClose } from '@singleshot/queues';
import type { Runtime } from '@singleshot/runtime';
import { compareStreamIds } from '@singleshot/store';
import {
  REPO_ROOT,
  spawnApps,
  startHttpSink,
  startTestRedis,
  testConfig,
  waitForQueuesIdle,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type HttpSink,
  type TestRedis,
} from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';

// The admin JSON API of the dashboard on a real fleet (`singleshot start` with
// every app): authentication, "what happened to this notification?" by
// operation and by message, the DLQ and its replay, the journal by time range,
// and 400s that say what was wrong.
const USER = 'admin';
const PASSWORD = 'api-test-password';
const TOKEN = 'api-test-token';
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const AUTH = { authorization: basic(USER, PASSWORD) };

let redis: TestRedis;
let sink: HttpSink;
let fleet: AppProcess;
let rt: Runtime;
let cleanup: () => void;
let config: Record<string, unknown>;
let base: string;
const startedAt = Date.now();

const messageKey = eventMessageKey('shop', 'evt-admin');
const opOf = (recipient: string) => operationKey({ messageKey, action: parseAction('notify'), recipient, channel: 'webhook' });
const sentKey = opOf('ok@example.com');
const deadKey = opOf('bad@example.com');

type Json = Record<string, unknown>;
async function api(path: string, init: RequestInit & { headers?: Record<string, string> } = {}): Promise<{ status: number; body: Json; headers: Headers }> {
  const res = await fetch(`${base}/admin/api${path}`, { ...init, headers: { ...AUTH, ...init.headers } });
  return { status: res.status, body: (await res.json()) as Json, headers: res.headers };
}

beforeAll(async () => {
  redis = await startTestRedis();
  sink = await startHttpSink();
  config = testConfig({
    redisUrl: redis.url,
    dashboard: { port: 0, host: '127.0.0.1', auth: { username: USER, password: PASSWORD, token: TOKEN } },
    routes: [{ name: 'orders', match: { source: 'shop' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { subject: 'Order', text: 'created' } }],
    providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 2000 }] },
  });
  const written = writeConfigFile(config);
  cleanup = written.cleanup;
  fleet = spawnApps('ingest,decision,delivery,dashboard', written.file);
  const ingest = `http://127.0.0.1:${await fleet.metricsPort()}`;
  base = `http://127.0.0.1:${await waitUntil(() => fleet.logs.find((l) => l.event === 'dashboard_listening')?.port as number | undefined, 'the dashboard')}`;
  rt = await testRuntime(config);

  // One event for two recipients: the provider rejects one for good (400), so it dies.
  sink.scriptFor('bad@example.com', { status: 400, body: { error: 'no such mailbox' } });
  const res = await fetch(`${ingest}/v1/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'evt-admin', source: 'shop', type: 'order.created', recipients: ['ok@example.com', 'bad@example.com'], data: {} }),
  });
  expect(res.status).toBe(202);
  await waitUntil(async () => (await rt.operations.get(sentKey))?.status === 'sent' && (await rt.operations.get(deadKey))?.status === 'dead', 'one sent, one dead', { timeoutMs: 30_000 });
  await waitUntil(async () => (await rt.queues.dead.getWaitingCount()) === 1, 'the DLQ record');
});

afterAll(async () => {
  await fleet?.stop();
  await rt?.close();
  await sink?.close();
  await redis?.destroy();
  cleanup?.();
});

describe('authentication', () => {
  it('answers 401 with challenges without valid credentials, and serves basic and bearer callers', async () => {
    const anonymous = await fetch(`${base}/admin/api/dlq`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toContain('Basic realm="singleshot"');
    expect(anonymous.headers.get('www-authenticate')).toContain('Bearer');
    expect(((await anonymous.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
    const cases: Array<[string, number]> = [
      [basic(USER, 'wrong'), 401],
      [basic('someone', PASSWORD), 401],
      [basic(USER, `${PASSWORD}x`), 401],
      ['Bearer wrong', 401],
      [`Bearer ${TOKEN}x`, 401],
      [`Basic ${TOKEN}`, 401],
      [basic(USER, PASSWORD), 200],
      [`Bearer ${TOKEN}`, 200],
    ];
    for (const [authorization, status] of cases) {
      expect((await fetch(`${base}/admin/api/dlq`, { headers: { authorization } })).status, authorization).toBe(status);
    }
    expect((await fetch(`${base}/admin/queues/`)).status).toBe(401);
    expect((await fetch(`${base}/admin/queues/api/queues`, { method: 'PUT' })).status).toBe(401);
    // Probes and Prometheus need no credentials.
    for (const path of ['/healthz', '/readyz', '/metrics']) expect((await fetch(`${base}${path}`)).status, path).toBe(200);
  });
});

describe('what happened to this notification', () => {
  it('shows an operation with its state, attempts and journal entries', async () => {
    const sent = await api(`/operations/${sentKey}`);
    expect(sent.status).toBe(200);
    expect(sent.body.operation).toMatchObject({ operationKey: sentKey, status: 'sent', provider: 'primary', externalId: sink.accepted.get(sentKey)?.id, recipient: 'ok@example.com', messageKey });
    expect((sent.body.history as Json[]).map((h) => h.outcome)).toEqual(['sent']);
    expect((sent.body.journal as Array<{ type: string; fields: Json }>).map((e) => [e.type, e.fields.op])).toEqual([['sent', sentKey]]);
    expect(sent.body.dead).toBeNull();

    const dead = await api(`/operations/${deadKey}`);
    expect(dead.body.operation).toMatchObject({ status: 'dead', reason: 'permanent' });
    expect((dead.body.journal as Array<{ type: string }>).map((e) => e.type)).toEqual(['dead']);
    expect(dead.body.dead).toMatchObject({ operationKey: deadKey, reason: 'permanent', job: { recipient: 'bad@example.com' } });

    const missing = await api(`/operations/${'e'.repeat(64)}`);
    expect(missing.status).toBe(404);
    expect((missing.body.error as Json).code).toBe('NOT_FOUND');
  });

  it('shows a message with each of its operations', async () => {
    const { status, body } = await api(`/messages/${messageKey}`);
    expect(status).toBe(200);
    expect(body.message).toMatchObject({ messageKey, arrivals: 1 });
    const ops = (body.operations as Json[]).map((o) => [o.operationKey, o.status]).sort();
    expect(ops).toEqual([[sentKey, 'sent'], [deadKey, 'dead']].sort());
  });

  it('lists the DLQ with each dead operation\'s reason', async () => {
    const { status, body } = await api('/dlq');
    expect(status).toBe(200);
    expect(body.depth).toBe(1);
    expect(body.items).toEqual([
      expect.objectContaining({ operationKey: deadKey, recipient: 'bad@example.com', channel: 'webhook', reason: 'permanent', status: 'dead', messageKey }),
    ]);
    expect(((await api('/dlq?filter=attempts_exhausted')).body.items as unknown[]).length).toBe(0);
  });
});

describe('Bull Board behind the guard', () => {
  const board = async (method: string, path: string) => {
    const res = await fetch(`${base}/admin/queues/api${path}`, { method, headers: { ...AUTH, 'content-type': 'application/json' }, ...(method === 'GET' ? {} : { body: '{}' }) });
    return { status: res.status, body: (await res.json().catch(() => ({}))) as Json };
  };

  it('lists the DLQ record as a failed job whose error is the reason it died', async () => {
    const { status, body } = await board('GET', '/queues?activeQueue=dead&status=failed&page=1&jobsPerPage=10');
    expect(status).toBe(200);
    const queues = body.queues as Array<{ name: string; counts: Record<string, number>; jobs: Array<{ id: string; failedReason: string; isFailed: boolean }> }>;
    expect(queues.map((q) => q.name).sort()).toEqual(['dead', 'decide', 'deliver', 'digest', 'render']);
    const dead = queues.find((q) => q.name === 'dead');
    expect(dead?.counts.failed).toBe(1);
    expect(dead?.jobs).toEqual([expect.objectContaining({ id: deadKey, isFailed: true, failedReason: expect.stringContaining('permanent: HTTP_400') })]);
  });

  it('refuses what would lose or forge notifications, and lets housekeeping through', async () => {
    for (const [method, path] of [
      ['PUT', '/queues/dead/empty'],
      ['PUT', '/queues/dead/obliterate'],
      ['PUT', '/queues/dead/clean/failed'],
      ['PUT', `/queues/dead/${deadKey}/clean`],
      ['PATCH', `/queues/dead/${deadKey}/update-data`],
      ['POST', '/queues/deliver/add'],
      ['PUT', '/queues/deliver/clean/failed'],
    ] as const) {
      const { status, body } = await board(method, path);
      expect(status, `${method} ${path}`).toBe(403);
      expect(body).toMatchObject({ error: 'Not allowed on singleshot queues', message: expect.stringContaining('would lose or forge') });
    }
    expect(await rt.queues.dead.getWaitingCount()).toBe(1);
    // A digest's close job is the only way to its flush: removing one that waits would strand the digest.
    const group = digestGroupId('orders', 'digest@example.com', '');
    const closeJob = digestId(group, 1);
    await enqueueDigestClose(rt.queues.digest, { group, seq: 1, route: 'orders', recipient: 'digest@example.com', key: '' }, closeJob, 3_600_000);
    expect((await board('PUT', `/queues/digest/${closeJob}/clean`)).status).toBe(403);
    expect(await (await rt.queues.digest.getJob(closeJob))?.getState()).toBe('delayed');
    // Retrying the deliver job of a sent operation replays nothing: already sent.
    const retrySent = await board('PUT', `/queues/deliver/${sentKey}/retry`);
    expect([retrySent.status, retrySent.body.error]).toEqual([409, 'Already sent']);
    // Cleaning completed jobs is housekeeping: the board does it.
    expect((await board('PUT', '/queues/decide/clean/completed')).status).toBeLessThan(300);
    // The log line travels through the child's stdout pipe, which may lag behind the HTTP answer.
    await waitUntil(
      () => fleet.logs.some((l) => l.event === 'board_action' && l.who === USER && l.method === 'PUT' && l.path === '/api/queues/decide/clean/completed'),
      'the board action log line',
      { timeoutMs: 10_000 },
    );
    expect(sink.accepted.get(sentKey)?.count).toBe(1);
  });
});

describe('replay', () => {
  it('replays a dead operation under its key once, journals who did it, and never sends a sent one again', async () => {
    const replayed = await api(`/dlq/${deadKey}/replay`, { method: 'POST' });
    expect(replayed.status).toBe(202);
    expect(replayed.body).toMatchObject({ operationKey: deadKey, result: 'replayed', from: 'dead', by: USER });
    await waitUntil(async () => (await rt.operations.get(deadKey))?.status === 'sent', 'the replayed operation to be sent', { timeoutMs: 30_000 });
    expect(sink.accepted.get(deadKey)?.count).toBe(1);
    expect((await api('/dlq')).body).toMatchObject({ depth: 0, items: [] });
    const journal = (await api(`/operations/${deadKey}`)).body.journal as Array<{ type: string; fields: Json }>;
    expect(journal.map((e) => e.type)).toEqual(['dead', 'replayed', 'sent']);
    expect(journal[1]?.fields).toMatchObject({ by: USER, via: 'api', op: deadKey });

    // Replaying again, or replaying an operation that was sent all along, sends nothing.
    const posts = sink.requests.length;
    for (const key of [deadKey, sentKey]) {
      const again = await api(`/dlq/${key}/replay`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
      expect(again.status, key).toBe(200);
      expect(again.body).toMatchObject({ operationKey: key, result: 'already_sent', by: 'token' });
    }
    const unknown = await api(`/dlq/${'d'.repeat(64)}/replay`, { method: 'POST' });
    expect(unknown.status).toBe(404);
    expect((unknown.body.error as Json).code).toBe('NOT_FOUND');
    await waitForQueuesIdle(rt.queues);
    expect(sink.requests.length).toBe(posts);
    expect(sink.accepted.get(deadKey)?.count).toBe(1);
    expect(sink.accepted.get(sentKey)?.count).toBe(1);
    expect(await fleet.metric('singleshot_replays_total', { via: 'api', result: 'replayed' })).toBe(1);
    expect(await fleet.metric('singleshot_replays_total', { via: 'api', result: 'already_sent' })).toBe(2);
  });

  it('reads the journal by time range, oldest first', async () => {
    const { status, body } = await api(`/journal?from=${new Date(startedAt - 1000).toISOString()}&to=${Date.now() + 1000}`);
    expect(status).toBe(200);
    const entries = body.entries as Array<{ id: string; type: string; ts: number; fields: Json }>;
    const ours = entries.filter((e) => e.fields.op === deadKey || e.fields.op === sentKey).map((e) => `${e.type}:${e.fields.op === deadKey ? 'dead-op' : 'sent-op'}`);
    expect(ours).toEqual(expect.arrayContaining(['sent:sent-op', 'dead:dead-op', 'replayed:dead-op', 'sent:dead-op']));
    expect(ours.indexOf('dead:dead-op')).toBeLessThan(ours.indexOf('replayed:dead-op'));
    // Oldest first by stream id (Redis time, the order of the writes); `ts` is the writer's clock.
    const ids = entries.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => compareStreamIds(a, b)));
    expect(body.count).toBe(entries.length);
    const one = await api(`/journal?from=${startedAt - 1000}&limit=1`);
    expect([one.status, one.body.count]).toEqual([200, 1]);
    const before = await api(`/journal?to=${startedAt - 60_000}`);
    expect([before.status, before.body.count]).toEqual([200, 0]);
  });
});

describe('bad input', () => {
  it.each([
    ['GET', '/operations/not-a-key', 'path.key'],
    ['GET', `/operations/${'A'.repeat(64)}`, 'path.key'],
    ['GET', `/messages/${'0'.repeat(63)}`, 'path.key'],
    ['POST', '/dlq/xyz/replay', 'path.key'],
    ['GET', '/dlq?limit=5000', 'query.limit'],
    ['GET', '/dlq?offset=-1', 'query.offset'],
    ['GET', '/journal?from=yesterday', 'query.from'],
    ['GET', '/journal?limit=0', 'query.limit'],
    ['GET', '/journal?limit=abc', 'query.limit'],
    ['GET', '/journal?from=2030-01-01T00:00:00Z&to=2020-01-01T00:00:00Z', 'query.from'],
    ['GET', '/journal?since=1h', 'query'],
  ])('%s %s → 400 naming %s', async (method, path, where) => {
    const { status, body, headers } = await api(path, { method });
    expect(status).toBe(400);
    expect(headers.get('content-type')).toContain('application/json');
    const error = body.error as { code: string; message: string; details: Array<{ path: string; message: string }> };
    expect(error.code).toBe('INVALID_REQUEST');
    expect(error.message).toContain(where);
    expect(error.details.length).toBeGreaterThan(0);
    expect(error.details.every((d) => d.path.startsWith(where.split('.')[0] as string) && d.message.length > 0)).toBe(true);
  });

  it('answers unknown routes with a JSON 404', async () => {
    const { status, body } = await api('/nope');
    expect([status, (body.error as Json).code]).toEqual([404, 'NOT_FOUND']);
  });
});

describe('starting', () => {
  it('refuses to listen beyond loopback without credentials, with a clear error', async () => {
    const open = writeConfigFile({ ...config, dashboard: { port: 0, host: '0.0.0.0' } });
    try {
      const child = spawn(process.execPath, ['dist/apps/dashboard/main.js'], {
        cwd: REPO_ROOT,
        env: { ...process.env, SINGLESHOT_CONFIG: open.file },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const code = await new Promise<number | null>((r) => child.once('close', r));
      expect(code).toBe(2);
      expect(stderr).toContain('refusing to start the dashboard on 0.0.0.0 without credentials');
      expect(stderr).toContain('dashboard.auth');
    } finally {
      open.cleanup();
    }
  });

  it('runs alone as `node dist/apps/dashboard/main.js` and stops on SIGTERM with exit 0', async () => {
    const file = writeConfigFile(config);
    const child = spawn(process.execPath, ['dist/apps/dashboard/main.js'], {
      cwd: REPO_ROOT,
      env: { ...process.env, SINGLESHOT_CONFIG: file.file, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    afterAll(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
      file.cleanup();
    });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    const line = await waitUntil(
      () => stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { event?: string; port: number; app: string }).find((l) => l.event === 'dashboard_listening'),
      'the standalone dashboard',
    );
    const port = line.port;
    expect(line.app).toBe('dashboard');
    expect((await fetch(`http://127.0.0.1:${port}/admin/api/dlq`, { headers: AUTH })).status).toBe(200);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
