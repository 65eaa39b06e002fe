import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '@singleshot/config';
import { createRuntime, type Runtime } from '@singleshot/runtime';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { DashboardStartError } from './errors';
import { startDashboard, type Dashboard } from './server';

// A dashboard that is never anonymous: with no credentials configured it
// still asks for a generated token, even on loopback.
let redis: TestRedis;
let dir: string;
const runtimes: Runtime[] = [];
const dashboards: Dashboard[] = [];

async function runtime(dashboard: Record<string, unknown>): Promise<Runtime> {
  const rt = await createRuntime(parseConfig({ redis: { url: redis.url }, log: { level: 'silent' }, dashboard }), { app: 'test' });
  runtimes.push(rt);
  return rt;
}

beforeAll(async () => {
  redis = await startTestRedis();
  dir = mkdtempSync(join(tmpdir(), 'dashboard-token-'));
});

afterAll(async () => {
  for (const d of dashboards) await d.close();
  for (const rt of runtimes) await rt.close();
  await redis?.destroy();
});

describe('no credentials configured', () => {
  it('makes a token (file mode 0600), prints the login URL once, and answers anonymous requests 401', async () => {
    const printed: string[] = [];
    const tokenPath = join(dir, 'state', 'dashboard-token');
    const dashboard = await startDashboard(await runtime({ tokenPath }), { port: 0, host: '127.0.0.1', printLogin: (l) => printed.push(l) });
    dashboards.push(dashboard);
    const base = `http://127.0.0.1:${dashboard.port}`;
    expect(dashboard.tokenFile).toBe(tokenPath);
    const token = readFileSync(tokenPath, 'utf8').trim();
    expect(token.length).toBeGreaterThanOrEqual(40);
    expect(statSync(tokenPath).mode & 0o777).toBe(0o600);
    expect(printed).toEqual([`singleshot dashboard: log in at ${base}/admin/login?token=${token} (token also in ${tokenPath})`]);

    for (const path of ['/admin/api/dlq', '/admin/queues/', '/admin/queues/api/queues']) expect((await fetch(`${base}${path}`)).status, path).toBe(401);
    expect((await fetch(`${base}/admin/api/dlq`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await fetch(`${base}/admin/api/dlq`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);

    // The login URL trades the token for a SameSite=Strict, HttpOnly cookie.
    expect((await fetch(`${base}/admin/login?token=wrong`, { redirect: 'manual' })).status).toBe(401);
    const login = await fetch(`${base}/admin/login?token=${encodeURIComponent(token)}`, { redirect: 'manual' });
    expect(login.status).toBe(302);
    const cookie = login.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect((await fetch(`${base}/admin/api/dlq`, { headers: { cookie: cookie.split(';')[0] as string } })).status).toBe(200);
  });

  it('a new start makes a new token: the old one stops working', async () => {
    const tokenPath = join(dir, 'rotating-token');
    const first = await startDashboard(await runtime({ tokenPath }), { port: 0, host: '127.0.0.1', printLogin: () => undefined });
    const old = readFileSync(tokenPath, 'utf8').trim();
    await first.close();
    const second = await startDashboard(await runtime({ tokenPath }), { port: 0, host: '127.0.0.1', printLogin: () => undefined });
    dashboards.push(second);
    const fresh = readFileSync(tokenPath, 'utf8').trim();
    expect(fresh).not.toBe(old);
    const at = `http://127.0.0.1:${second.port}/admin/api/dlq`;
    expect((await fetch(at, { headers: { authorization: `Bearer ${old}` } })).status).toBe(401);
    expect((await fetch(at, { headers: { authorization: `Bearer ${fresh}` } })).status).toBe(200);
  });
});

describe('the explicit opt-out', () => {
  it('dashboard.allowAnonymous serves anonymous callers on loopback', async () => {
    const dashboard = await startDashboard(await runtime({ allowAnonymous: true, tokenPath: join(dir, 'unused') }), { port: 0, host: '127.0.0.1' });
    dashboards.push(dashboard);
    expect(dashboard.tokenFile).toBeUndefined();
    expect((await fetch(`http://127.0.0.1:${dashboard.port}/admin/api/dlq`)).status).toBe(200);
  });

  it('is refused on any other host', async () => {
    const rt = await runtime({ allowAnonymous: true });
    const err = await startDashboard(rt, { port: 0, host: '0.0.0.0' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DashboardStartError);
    expect((err as DashboardStartError).code).toBe('DASHBOARD_AUTH_REQUIRED');
  });
});
