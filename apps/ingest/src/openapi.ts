import { openApiDocument, type OpenApiJson } from '@singleshot/http';
import { errorSchema } from '@singleshot/observability';
import type { IngestRoute } from './http/route';

/**
 * The ingest HTTP API as OpenAPI 3.1, served at `GET /openapi.json`,
 * generated from the route table by the shared generator of libs/http (a
 * JSON route's request body from its zod schema). test/e2e/openapi.test.ts
 * validates live answers of every endpoint against it.
 */
export function ingestOpenApi(routes: readonly IngestRoute[]): OpenApiJson {
  return openApiDocument(routes, {
    info: {
      title: 'singleshot ingest API',
      version: '1',
      description: 'Producers post business events and mail; each message makes at most one notification per recipient and channel.',
    },
    schemas: { Error: errorSchema },
    securitySchemes: {
      apiKey: { type: 'http', scheme: 'bearer', description: '`Authorization: Bearer <key>` (config `ingest.apiKeys`, each key limited to its `sources`).' },
      signature: { type: 'apiKey', in: 'header', name: 'X-Singleshot-Signature', description: '`sha256=<hex HMAC-SHA256 of the raw body>` with one of `ingest.signingSecrets`.' },
    },
    // Either credential; with neither configured, ingest listens on loopback only and takes anonymous posts.
    security: [{ apiKey: [] }, { signature: [] }, {}],
  });
}
