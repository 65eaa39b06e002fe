import { Validator } from '@seriousme/openapi-schema-validator';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, openApiPath, type ListeningServer } from '@singleshot/http';
import { createLogger, probePaths } from '@singleshot/observability';
import { ADMIN_API_PATH, ADMIN_ROUTES, adminApiRouter } from './admin-api';
import { adminOpenApi } from './admin-openapi';
import type { AdminRoute } from './admin-route';
import type { AdminApiDeps } from './deps';

// The route table and the admin document served at /openapi.json are one
// thing: every route is an operation of the document and every operation a
// route; and every route is mounted, its input checked by its schemas before
// anything is read (so no store is needed here: nothing gets that far).
type Doc = { paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string }>; requestBody?: unknown }>> };

const unused = (): never => {
  throw new Error('not reached: the input is refused first');
};
const deps = {
  operations: { get: unused, history: unused, storedJob: unused },
  messages: { get: unused },
  journal: { range: unused, forOperation: unused },
  queues: { dead: {} },
  replay: unused,
  // A route without input answers from what it is given.
  tenants: { read: async () => ({ fairShare: false, window: 128, tenants: [] }) },
  logger: createLogger({ app: 'test', level: 'silent' }),
} as unknown as AdminApiDeps;

let server: ListeningServer;
let base: string;

beforeAll(async () => {
  const app = express();
  app.use(ADMIN_API_PATH, adminApiRouter(deps));
  server = await listen(app, 0, '127.0.0.1', { headersTimeoutMs: 10_000, requestTimeoutMs: 10_000, keepAliveTimeoutMs: 1_000, maxConnections: 100 });
  base = `http://127.0.0.1:${server.port}${ADMIN_API_PATH}`;
});

afterAll(async () => {
  await server?.close();
});

/** A request each route's own schemas refuse: a blank path parameter, an unknown query key, a body that is no object. */
function refused(route: AdminRoute): { url: string; init: RequestInit } | undefined {
  if (!route.params && !route.query && !route.json) return undefined;
  const path = route.path.replace(/:\w+/g, '%20');
  return {
    url: `${base}${path}${route.query ? '?unknown=1' : ''}`,
    init: { method: route.method, ...(route.json ? { body: '[]', headers: { 'content-type': 'application/json' } } : {}) },
  };
}

describe('the admin OpenAPI document of the route table', () => {
  it('has one operation per route and no other, and is valid OpenAPI 3.1', async () => {
    const doc = adminOpenApi() as Doc;
    const documented = Object.entries(doc.paths)
      .filter(([path]) => !(path in probePaths))
      .flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`));
    const routed = ADMIN_ROUTES.map((r) => `${r.method} ${openApiPath(`${ADMIN_API_PATH}${r.path}`)}`);
    expect(documented.sort()).toEqual([...routed].sort());
    expect(new Set(routed).size).toBe(routed.length);
    expect(routed).toEqual(expect.arrayContaining(['GET /admin/api/operations/{key}', 'POST /admin/api/dlq/{key}/replay', 'GET /admin/api/waiting', 'DELETE /admin/api/suppressions', 'GET /admin/api/suppressions/{recipient}']));
    const result = await new Validator().validate(doc as unknown as Record<string, unknown>);
    expect(result.valid ? [] : result.errors).toEqual([]);
  });

  it("shows each route's zod schemas: its parameters and its request body", () => {
    const doc = adminOpenApi() as Doc;
    for (const route of ADMIN_ROUTES) {
      const operation = doc.paths[openApiPath(`${ADMIN_API_PATH}${route.path}`)]?.[route.method.toLowerCase()];
      const names = (operation?.parameters ?? []).map((p) => `${p.in}:${p.name}`);
      for (const name of route.path.match(/:\w+/g) ?? []) expect(names, route.path).toContain(`path:${name.slice(1)}`);
      expect(operation?.requestBody !== undefined, `${route.method} ${route.path}`).toBe(route.json !== undefined);
    }
    const dlq = doc.paths['/admin/api/dlq']?.get?.parameters?.map((p) => p.name);
    expect(dlq).toEqual(['limit', 'offset', 'filter']);
  });

  it('mounts every route, and refuses input off its schemas with a 400 naming the problem', async () => {
    for (const route of ADMIN_ROUTES) {
      const request = refused(route);
      const res = request ? await fetch(request.url, request.init) : await fetch(`${base}${route.path}`, { method: route.method });
      const body = (await res.json()) as { error?: { code: string; details?: Array<{ path: string }> } };
      const label = `${route.method} ${route.path}`;
      if (!request) {
        expect(res.status, label).toBe(200);
        continue;
      }
      expect(res.status, label).toBe(400);
      expect(body.error?.code, label).toBe('INVALID_REQUEST');
      const where = route.params ? 'path' : route.query ? 'query' : 'body';
      expect(body.error?.details?.[0]?.path, label).toMatch(new RegExp(`^${where}`));
    }
    const stray = await fetch(`${base}/nothing-here`);
    expect(stray.status).toBe(404);
  });
});
