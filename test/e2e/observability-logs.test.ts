import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freePort,
  spawnApps,
  startHttpSink,
  testConfig,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type HttpSink,
} from '@singleshot/test-harness';

// Secrets never reach the logs. One `singleshot start` process runs every app
// at LOG_LEVEL=trace with a config full of credentials (Redis password in the
// URL, ingest signing secret, dashboard password and token, provider API
// headers, SMTP and IMAP passwords), is driven through the paths that use each
// of them (and through failures that log errors), and its whole stdout and
// stderr is searched for every secret and its encodings.
const SECRETS = {
  redis: 'redis-pw-Q7x2vL',
  signing: 'sign-secret-K9v4tB',
  dashboardPassword: 'dash-pw-M3n8qZ',
  dashboardToken: 'dash-token-Z5c1wY',
  providerToken: 'prov-token-H2j6sD',
  providerApiKey: 'prov-key-W4p9fG',
  smtp: 'smtp-pw-R8t3kJ',
  imap: 'imap-pw-F6g2nX',
};

let redisDir: string;
let redisServer: ChildProcess;
let sink: HttpSink;
let fleet: AppProcess;
let cleanup: () => void;
let output = '';

/** `X-Singleshot-Signature` of a body (docs/contract.md: HMAC-SHA256 of the raw bytes). */
const signBody = (body: string, secret: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** A Redis that requires a password (the harness' Redis has none). */
async function startPasswordRedis(): Promise<{ port: number }> {
  redisDir = mkdtempSync(join(tmpdir(), 'singleshot-redis-auth-'));
  const port = await freePort();
  redisServer = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', redisDir, '--requirepass', SECRETS.redis, '--appendonly', 'yes', '--save', '', '--maxmemory-policy', 'noeviction', '--logfile', ''],
    { stdio: 'ignore' },
  );
  await waitUntil(async () => {
    const { Redis } = await import('ioredis');
    const probe = new Redis({ port, host: '127.0.0.1', password: SECRETS.redis, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      return (await probe.ping()) === 'PONG';
    } finally {
      probe.disconnect();
    }
  }, 'redis-server with requirepass');
  return { port };
}

beforeAll(async () => {
  const { port } = await startPasswordRedis();
  sink = await startHttpSink();
  const closedPort = await freePort();
  const written = writeConfigFile(
    testConfig({
      redisUrl: `redis://:${SECRETS.redis}@127.0.0.1:${port}`,
      ingest: { port: 0, host: '127.0.0.1', signingSecrets: [SECRETS.signing] },
      dashboard: { port: 0, host: '127.0.0.1', auth: { username: 'opsuser', password: SECRETS.dashboardPassword, token: SECRETS.dashboardToken } },
      delivery: { leaseMs: 2000, attempts: 2, backoffMs: [50], concurrency: 4, metricsPort: 0 },
      routes: [
        { name: 'orders', match: { source: 'shop', type: 'order.created' }, action: 'notify', channel: 'webhook', recipients: 'event' },
        { name: 'mails', match: { source: 'shop', type: 'order.mailed' }, action: 'notify', channel: 'email', recipients: 'event' },
      ],
      providers: {
        webhook: [
          {
            name: 'primary',
            type: 'http',
            url: sink.url,
            lookupUrl: sink.lookupUrl,
            timeoutMs: 2000,
            headers: { Authorization: `Bearer ${SECRETS.providerToken}`, 'X-Api-Key': SECRETS.providerApiKey },
          },
        ],
        // Nothing listens there: every send fails, is retried, then dies with its error logged.
        email: [{ name: 'relay', type: 'smtp', host: '127.0.0.1', port: closedPort, user: 'mailer', password: SECRETS.smtp, from: 'singleshot@example.test', timeoutMs: 2000 }],
      },
      mailboxes: [
        { id: 'support', owner: 'owner@example.test', imap: { host: '127.0.0.1', port: closedPort, secure: false, user: 'support@example.test', password: SECRETS.imap, pollIntervalMs: 200 } },
      ],
    }),
  );
  cleanup = written.cleanup;
  fleet = spawnApps('ingest,decision,delivery,dashboard', written.file, { LOG_LEVEL: 'trace' });
  fleet.child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  fleet.child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
});

afterAll(async () => {
  await fleet?.stop();
  await sink?.close();
  if (redisServer && redisServer.exitCode === null) {
    const exited = new Promise((r) => redisServer.once('exit', r));
    redisServer.kill('SIGKILL');
    await exited;
  }
  if (redisDir) rmSync(redisDir, { recursive: true, force: true });
  cleanup?.();
});

describe('secrets in logs', () => {
  it('uses every secret, logs the failures around them, and prints none of them', async () => {
    const ingest = `http://127.0.0.1:${await fleet.metricsPort()}`;
    const dashboard = `http://127.0.0.1:${await waitUntil(() => fleet.logs.find((l) => l.event === 'dashboard_listening')?.port as number | undefined, 'the dashboard')}`;
    const post = (event: unknown, signature?: string) => {
      const body = JSON.stringify(event);
      return fetch(`${ingest}/v1/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-singleshot-signature': signature ?? signBody(body, SECRETS.signing) },
        body,
      });
    };

    // The signing secret: a good signature is accepted, a bad one refused.
    const signedHeaders: string[] = [];
    const good = { id: 'evt-secret-1', source: 'shop', type: 'order.created', recipients: ['r@example.com'], data: {} };
    signedHeaders.push(signBody(JSON.stringify(good), SECRETS.signing));
    expect((await post(good)).status).toBe(202);
    expect((await post({ ...good, id: 'evt-secret-2' }, `sha256=${'0'.repeat(64)}`)).status).toBe(401);
    // The provider's credentials go out with the send.
    await sink.waitFor((s) => s.accepted.size === 1, { timeoutMs: 30_000, what: 'the webhook send' });
    expect(sink.requests[0]?.headers.authorization).toBe(`Bearer ${SECRETS.providerToken}`);
    expect(sink.requests[0]?.headers['x-api-key']).toBe(SECRETS.providerApiKey);
    // SMTP with a password: fails, retries, dies, and the error is logged.
    const mailed = { id: 'evt-secret-3', source: 'shop', type: 'order.mailed', recipients: ['m@example.com'], data: {} };
    signedHeaders.push(signBody(JSON.stringify(mailed), SECRETS.signing));
    expect((await post(mailed)).status).toBe(202);
    await waitUntil(() => fleet.logs.some((l) => l.event === 'operation_dead'), 'the SMTP operation to die', { timeoutMs: 30_000 });
    // The IMAP password: the poller fails to connect and logs it.
    await waitUntil(() => fleet.logs.some((l) => String(l.event).startsWith('imap_') && l.level !== 'info'), 'the IMAP poller to log its failure', { timeoutMs: 30_000 });

    // Dashboard credentials: wrong and right, both schemes.
    const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    const attempts: Array<[string | undefined, number]> = [
      [undefined, 401],
      [basic('opsuser', 'wrong-password'), 401],
      ['Bearer wrong-token', 401],
      [basic('opsuser', SECRETS.dashboardPassword), 200],
      [`Bearer ${SECRETS.dashboardToken}`, 200],
    ];
    for (const [authorization, status] of attempts) {
      const res = await fetch(`${dashboard}/admin/api/dlq`, { headers: authorization ? { authorization } : {} });
      expect(res.status, authorization ?? 'no credentials').toBe(status);
    }
    expect((await fetch(`${dashboard}/admin/queues/`, { headers: { authorization: basic('opsuser', SECRETS.dashboardPassword) } })).status).toBe(200);

    fleet.signal('SIGTERM');
    expect(await fleet.exited()).toBe(0);

    // The log is the real thing: JSON lines down to debug, from every app.
    const lines = output.split('\n').filter(Boolean);
    expect(lines.filter((l) => l.startsWith('{"level":"debug"')).length).toBeGreaterThan(2);
    expect(fleet.logs.filter((l) => l.event === 'dashboard_auth_failed')).toHaveLength(3);
    for (const event of ['ingest_listening', 'dashboard_listening', 'operation_dead', 'shutdown_complete']) {
      expect(fleet.logs.map((l) => l.event), event).toContain(event);
    }
    const forbidden = [
      ...Object.values(SECRETS),
      Buffer.from(`opsuser:${SECRETS.dashboardPassword}`).toString('base64'),
      Buffer.from(SECRETS.redis).toString('base64'),
      ...signedHeaders,
      ...signedHeaders.map((h) => h.slice('sha256='.length)),
    ];
    for (const secret of forbidden) {
      const at = output.indexOf(secret);
      expect(at, `"${secret}" appears in the output: …${output.slice(Math.max(0, at - 200), at + 100)}…`).toBe(-1);
    }
  });
});
