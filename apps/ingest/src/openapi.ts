import { z } from 'zod';
import { errorSchema } from '@singleshot/observability';
import type { IngestRoute, Json } from './http/route';

/** `/v1/mail/inbound/:provider` as OpenAPI writes it: `/v1/mail/inbound/{provider}`. */
export function openApiPath(path: string): string {
  return path.replace(/:(\w+)/g, '{$1}');
}

/**
 * The ingest HTTP API as OpenAPI 3.1, served at `GET /openapi.json`,
 * generated from the route table: one operation per route, a JSON route's
 * request body from its zod schema (z.toJSONSchema, as the request may be
 * written: defaults make a field optional), kept once under
 * `components.schemas`. test/e2e/openapi.test.ts validates live answers of
 * every endpoint against it.
 */
export function ingestOpenApi(routes: readonly IngestRoute[]): Json {
  const schemas: Json = { Error: errorSchema };
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const { requestBody, ...doc } = route.doc;
    let body = requestBody;
    if (route.json) {
      const { $schema: _dialect, ...schema } = z.toJSONSchema(route.json.schema, { io: 'input', target: 'draft-2020-12' });
      schemas[route.json.name] = schema;
      body = { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${route.json.name}` } } } };
    }
    const path = openApiPath(route.path);
    const operations = (paths[path] ??= {});
    const method = route.method.toLowerCase();
    operations[method] = { ...doc, ...(body ? { requestBody: body } : {}) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'singleshot ingest API',
      version: '1',
      description: 'Producers post business events and mail; each message makes at most one notification per recipient and channel.',
    },
    components: {
      schemas,
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: '`Authorization: Bearer <key>` (config `ingest.apiKeys`, each key limited to its `sources`).' },
        signature: { type: 'apiKey', in: 'header', name: 'X-Singleshot-Signature', description: '`sha256=<hex HMAC-SHA256 of the raw body>` with one of `ingest.signingSecrets`.' },
      },
    },
    // Either credential; with neither configured, ingest listens on loopback only and takes anonymous posts.
    security: [{ apiKey: [] }, { signature: [] }, {}],
    paths,
  };
}
