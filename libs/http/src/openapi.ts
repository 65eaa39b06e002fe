import { z } from 'zod';

/** A JSON value of an OpenAPI document. */
export type OpenApiJson = Record<string, unknown>;

/** One operation of the document, but what comes from the route's zod schemas (body, path and query parameters). */
export interface OperationDoc {
  summary: string;
  tags: string[];
  security?: OpenApiJson[];
  parameters?: OpenApiJson[];
  requestBody?: OpenApiJson;
  responses: OpenApiJson;
}

/**
 * What the document needs of a route declaration: its method and
 * Express-style path (`/v1/mail/inbound/:provider`), its operation, and the
 * zod schemas its input is validated with, which the document shows too.
 */
export interface DocumentedRoute {
  readonly method: string;
  readonly path: string;
  readonly doc: OperationDoc;
  /** A JSON request body, kept once under `components.schemas` as `name`. */
  readonly json?: { readonly schema: z.ZodType; readonly name: string };
  /** The path parameters, an object schema. */
  readonly params?: z.ZodType;
  /** The query parameters, an object schema. */
  readonly query?: z.ZodType;
}

/** What a document says besides its routes. */
export interface DocumentHead {
  info: OpenApiJson;
  /** Schemas the operations refer to, written first under `components.schemas`. */
  schemas?: OpenApiJson;
  securitySchemes?: OpenApiJson;
  security?: OpenApiJson[];
  /** Operations served beside the route table (the probes), after its own. */
  paths?: Record<string, OpenApiJson>;
}

/** `/v1/mail/inbound/:provider` as OpenAPI writes it: `/v1/mail/inbound/{provider}`. */
export function openApiPath(path: string): string {
  return path.replace(/:(\w+)/g, '{$1}');
}

/** A zod schema as JSON Schema 2020-12, as a request may be written (a default makes a field optional). */
export function requestSchema(schema: z.ZodType): OpenApiJson {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { io: 'input', target: 'draft-2020-12' });
  return json;
}

/** An object schema's properties as OpenAPI parameters `in` the path or the query. */
function parametersOf(schema: z.ZodType, where: 'path' | 'query'): OpenApiJson[] {
  const json = requestSchema(schema) as { properties?: Record<string, OpenApiJson>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, { description, ...property }]) => ({
    name,
    in: where,
    ...(where === 'path' || json.required?.includes(name) ? { required: true } : {}),
    schema: property,
    ...(typeof description === 'string' ? { description } : {}),
  }));
}

/**
 * An OpenAPI 3.1 document generated from a route table: one operation per
 * route, a JSON route's request body from its zod schema (kept once under
 * `components.schemas`), its path and query parameters from theirs, so a
 * route is declared once and its document cannot tell another story.
 */
export function openApiDocument(routes: readonly DocumentedRoute[], head: DocumentHead): OpenApiJson {
  const schemas: OpenApiJson = { ...head.schemas };
  const paths: Record<string, OpenApiJson> = {};
  for (const route of routes) {
    const { requestBody, ...doc } = route.doc;
    const operation: OpenApiJson = { ...doc };
    const declared = [...(route.params ? parametersOf(route.params, 'path') : []), ...(route.query ? parametersOf(route.query, 'query') : [])];
    if (declared.length > 0) operation.parameters = [...(doc.parameters ?? []), ...declared];
    if (route.json) {
      schemas[route.json.name] = requestSchema(route.json.schema);
      operation.requestBody = { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${route.json.name}` } } } };
    } else if (requestBody) {
      operation.requestBody = requestBody;
    }
    (paths[openApiPath(route.path)] ??= {})[route.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: head.info,
    components: { schemas, ...(head.securitySchemes ? { securitySchemes: head.securitySchemes } : {}) },
    ...(head.security ? { security: head.security } : {}),
    paths: { ...paths, ...head.paths },
  };
}
