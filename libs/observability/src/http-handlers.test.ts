import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createMetrics, livenessHandler, metricsHandler, readinessHandler } from './index';

describe('handlers on an express app', () => {
  let server: Server | undefined;
  afterEach(async () => {
    const s = server;
    server = undefined;
    if (!s) return;
    const closed = new Promise<void>((resolve) => s.close(() => resolve()));
    s.closeAllConnections();
    await closed;
  });

  it('serve the same endpoints as the health server', async () => {
    const metrics = createMetrics(new Registry());
    let ok = true;
    const app = express();
    app.get('/healthz', livenessHandler());
    app.get('/readyz', readinessHandler(async () => ({ ok, checks: { redis: ok ? 'ok' : 'down' } })));
    app.get('/metrics', metricsHandler(metrics.registry));
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect([ready.status, await ready.json()]).toEqual([200, { status: 'ok', checks: { redis: 'ok' } }]);
    ok = false;
    const notReady = await fetch(`${base}/readyz`);
    expect([notReady.status, await notReady.json()]).toEqual([503, { status: 'unavailable', checks: { redis: 'down' } }]);

    metrics.eventsReceived.inc({ source: 'shop', result: 'duplicate' });
    const scrape = await fetch(`${base}/metrics`);
    expect(scrape.headers.get('content-type')).toBe(metrics.registry.contentType);
    expect(await scrape.text()).toContain('singleshot_events_received_total{source="shop",result="duplicate"} 1');
  });
});
