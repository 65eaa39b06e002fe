import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseConfig } from '@singleshot/config';
import { createRuntime, type Runtime } from '@singleshot/runtime';
import { startTestRedis, waitUntil, type TestRedis } from '@singleshot/test-harness';
import { openApiPath } from '@singleshot/http';
import { eventBodySchema } from './routes/event-body';
import { startIngest, type IngestApp } from './server';

// The route table and the document served at /openapi.json are one thing:
// every route is an operation of the document and every operation a route,
// and every documented operation is answered by its route (never the 404 of
// a request no route took).
let redis: TestRedis;
let rt: Runtime;
let ingest: IngestApp;
let base: string;

beforeAll(async () => {
  redis = await startTestRedis();
  const config = parseConfig({
    redis: { url: redis.url },
    log: { level: 'silent' },
    ingest: { host: '127.0.0.1' },
    mailboxes: [{ id: 'support', owner: 'owner@example.test' }],
    webhooks: { postmark: { username: 'pm', password: 'pm-password' } },
    providers: { log: [{ type: 'log', name: 'log' }] },
    routes: [{ name: 'orders', match: { source: 'shop' }, action: 'notify', channel: 'log' }],
  });
  rt = await createRuntime(config, { app: 'test' });
  ingest = await startIngest(rt, { port: 0, host: '127.0.0.1', pollers: false });
  base = `http://127.0.0.1:${ingest.port}`;
  await waitUntil(async () => (await fetch(`${base}/readyz`)).status === 200 || undefined, 'the producer connection');
});

afterAll(async () => {
  await ingest?.close();
  await rt?.close();
  await redis?.destroy();
});

type Doc = { paths: Record<string, Record<string, { requestBody?: unknown }>>; components: { schemas: Record<string, unknown> } };

describe('the OpenAPI document of the route table', () => {
  it('has one operation per route, and no other', async () => {
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as Doc;
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`));
    const routed = ingest.routes.map((r) => `${r.method} ${openApiPath(r.path)}`);
    // Equal as lists of the same length: two routes of one operation would show as one.
    expect(documented.sort()).toEqual([...routed].sort());
    expect(new Set(routed).size).toBe(routed.length);
    // Every endpoint ingest serves is in the table (a route missing here was missed by the document too).
    expect(routed).toEqual(
      expect.arrayContaining([
        'POST /v1/events',
        'POST /v1/mail/inbound',
        'POST /v1/mail/inbound/{provider}',
        'POST /v1/mail/inbound/{provider}/{mailbox}',
        'POST /v1/mail/inbound/mailgun/{mailbox}/mime',
        'GET /v1/documents/{documentKey}/{file}',
        'GET /healthz',
        'GET /readyz',
        'GET /metrics',
        'GET /openapi.json',
      ]),
    );
  });

  it('shows the event body as the very schema that validates it', async () => {
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as Doc;
    const { $schema: _dialect, ...event } = z.toJSONSchema(eventBodySchema, { io: 'input' });
    expect(doc.components.schemas.Event).toEqual(event);
    expect(doc.components.schemas.Event).toMatchObject({ required: ['source', 'type'], properties: { source: { not: { const: 'mail' } } } });
    expect(doc.paths['/v1/events']?.post?.requestBody).toEqual({ required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Event' } } } });
  });

  it('every documented operation is answered by its route', async () => {
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as Doc;
    const values: Record<string, string> = { provider: 'postmark', mailbox: 'support', documentKey: 'f'.repeat(64), file: 'x.pdf' };
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const method of Object.keys(ops)) {
        const url = path.replace(/\{(\w+)\}/g, (_m, name: string) => values[name] ?? 'x');
        const res = await fetch(`${base}${url}`, { method: method.toUpperCase(), ...(method === 'post' ? { body: '{}', headers: { 'content-type': 'application/json' } } : {}) });
        const text = await res.text();
        expect(text, `${method.toUpperCase()} ${url}`).not.toContain('no route for');
        expect(res.status, `${method.toUpperCase()} ${url}`).toBeLessThan(500);
      }
    }
    // The check bites: a path of no route gets the router's 404.
    expect(await (await fetch(`${base}/v1/nothing`)).text()).toContain('no route for');
  });
});
