import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, createMetrics, startHealthServer, type HealthServer, type Readiness } from './index';

describe('startHealthServer', () => {
  const servers: HealthServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  async function start(ready: () => Promise<Readiness>, readyTimeoutMs?: number) {
    const logLines: string[] = [];
    const logger = createLogger({
      app: 'test',
      destination: new Writable({
        write(chunk: Buffer, _enc, done) {
          logLines.push(chunk.toString('utf8'));
          done();
        },
      }),
    });
    const metrics = createMetrics(new Registry());
    const server = await startHealthServer({ port: 0, host: '127.0.0.1', registry: metrics.registry, ready, logger, readyTimeoutMs });
    servers.push(server);
    return { server, metrics, logLines, base: `http://127.0.0.1:${server.port}` };
  }

  it('serves /healthz, /readyz and /metrics on a free port, and logs the port', async () => {
    const { server, metrics, logLines, base } = await start(async () => ({ ok: true, checks: { redis: 'ok', workers: 'ok' } }));
    expect(server.port).toBeGreaterThan(0);
    expect(logLines.map((l) => JSON.parse(l) as Record<string, unknown>)).toContainEqual(
      expect.objectContaining({ event: 'health_server_listening', port: server.port }),
    );

    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });

    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ok', checks: { redis: 'ok', workers: 'ok' } });

    metrics.deliveries.inc({ channel: 'email', provider: 'relay', result: 'sent' }, 3);
    const scrape = await fetch(`${base}/metrics`);
    expect(scrape.status).toBe(200);
    expect(scrape.headers.get('content-type')).toBe(metrics.registry.contentType);
    expect(await scrape.text()).toContain('singleshot_deliveries_total{channel="email",provider="relay",result="sent"} 3');

    const missing = await fetch(`${base}/nope`);
    expect(missing.status).toBe(404);
    const post = await fetch(`${base}/healthz`, { method: 'POST' });
    expect(post.status).toBe(405);
  });

  it('answers 503 with the checks when not ready', async () => {
    const { base } = await start(async () => ({ ok: false, checks: { redis: 'down: ECONNREFUSED', workers: 'ok' } }));
    const res = await fetch(`${base}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ status: 'unavailable', checks: { redis: 'down: ECONNREFUSED', workers: 'ok' } });
  });

  it('answers 503 when the check throws or hangs', async () => {
    const throwing = await start(async () => {
      throw new Error('boom');
    });
    const res = await fetch(`${throwing.base}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ status: 'unavailable', checks: { ready: 'error: boom' } });

    const hanging = await start(() => new Promise<Readiness>(() => undefined), 50);
    const slow = await fetch(`${hanging.base}/readyz`);
    expect(slow.status).toBe(503);
    expect(((await slow.json()) as { checks: Record<string, string> }).checks.ready).toContain('timed out');
  });

  it('closes even with a keep-alive connection open', async () => {
    const { server, base } = await start(async () => ({ ok: true, checks: {} }));
    const res = await fetch(`${base}/healthz`, { headers: { connection: 'keep-alive' } });
    expect(res.status).toBe(200);
    await res.text();
    servers.splice(servers.indexOf(server), 1);
    await server.close();
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  });
});
