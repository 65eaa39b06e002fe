import { openApiDocument, type DocumentedRoute, type OpenApiJson } from '@singleshot/http';
import { errorResponse, errorSchema, probePaths } from '@singleshot/observability';
import { ADMIN_API_PATH, ADMIN_ROUTES } from './admin-api';
import type { AdminRoute } from './admin-route';
import { RECORD_SCHEMAS } from './admin-schemas';
import { SUPPRESSION_SCHEMAS } from './routes/suppressions';

/** Answers every admin endpoint can give; a route's own answer of a status comes first. */
const COMMON = {
  '400': errorResponse('Invalid path, query or body (code `INVALID_REQUEST`; details list the problems)'),
  '401': errorResponse('No valid credentials (code `UNAUTHORIZED`); a `WWW-Authenticate` challenge accompanies it'),
  '403': errorResponse('The credentials are valid but may not use this endpoint (code `TENANT_NOT_ALLOWED`: a tenant\'s key, on what every tenant shares), or a state change from another origin (code `CROSS_ORIGIN`)'),
  '500': errorResponse('Internal error'),
};

/**
 * Closes every object schema that lists its properties (`additionalProperties:
 * false` unless it says otherwise): an answer's fields are exactly the
 * documented ones, so a field a handler starts to answer fails the check of
 * live answers until the document names it.
 */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: OpenApiJson = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, closed(value)]));
  if (out.properties !== undefined && out.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}

/** A route as the document shows it: its full path, and the answers every admin route shares. */
function documented(route: AdminRoute): DocumentedRoute {
  const responses = closed({ ...COMMON, ...route.doc.responses }) as OpenApiJson;
  return { ...route, path: `${ADMIN_API_PATH}${route.path}`, doc: { tags: route.doc.tags ?? [], ...route.doc, responses } };
}

/**
 * The dashboard's admin JSON API as OpenAPI 3.1, served at `GET
 * /openapi.json` on the dashboard, generated from `ADMIN_ROUTES` by the
 * shared generator (request bodies, path and query parameters from the
 * routes' zod schemas). Answers are closed objects; test/e2e/dashboard-openapi.test.ts
 * checks live answers of every route against it.
 */
export function adminOpenApi(routes: readonly AdminRoute[] = ADMIN_ROUTES): OpenApiJson {
  return openApiDocument(routes.map(documented), {
    info: {
      title: 'singleshot admin API',
      version: '1',
      description: 'What happened to a notification, the dead-letter queue and its replay, the journal, the sources, documents, scheduled operations and open digests, the suppression list, the tenants.',
    },
    schemas: closed({ Error: errorSchema, ...RECORD_SCHEMAS, ...SUPPRESSION_SCHEMAS }) as OpenApiJson,
    securitySchemes: {
      basic: { type: 'http', scheme: 'basic', description: '`dashboard.auth.username` / `password`' },
      bearer: { type: 'http', scheme: 'bearer', description: '`dashboard.auth.token`' },
    },
    security: [{ basic: [] }, { bearer: [] }],
    paths: probePaths as Record<string, OpenApiJson>,
  });
}
