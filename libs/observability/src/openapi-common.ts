/**
 * Pieces shared by the OpenAPI 3.1 documents of ingest and the dashboard
 * (`GET /openapi.json` on each): the one error shape, the probe endpoints
 * every app serves, and the document's own endpoint. Schemas are JSON Schema
 * 2020-12, as OpenAPI 3.1 defines them.
 */

type Json = Record<string, unknown>;

/** `{ "error": { "code", "message", "details" } }`: every 4xx/5xx of both APIs. */
export const errorSchema: Json = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', description: 'Stable, machine-readable; branch on this, never on the message.' },
        message: { type: 'string' },
        details: { description: 'Optional context: validation issues as `path: message` strings, or the outcome of an operation.' },
      },
    },
  },
};

/** A response with the error body. */
export function errorResponse(description: string, headers?: Json): Json {
  return {
    description,
    ...(headers ? { headers } : {}),
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  };
}

export const retryAfterHeader: Json = {
  'Retry-After': { description: 'Seconds to wait before retrying (same request, same id).', schema: { type: 'string', pattern: '^[0-9]+$' } },
};

const statusBody = (statuses: string[], withChecks: boolean): Json => ({
  type: 'object',
  required: withChecks ? ['status', 'checks'] : ['status'],
  properties: {
    status: { enum: statuses },
    ...(withChecks ? { checks: { type: 'object', additionalProperties: { type: 'string' } } } : {}),
  },
});

/** `/healthz`, `/readyz`, `/metrics`, `/openapi.json`: open on every app (probes and Prometheus). */
export const probePaths: Json = {
  '/healthz': {
    get: {
      tags: ['probes'],
      summary: 'The process is alive',
      security: [],
      responses: { '200': { description: 'Alive', content: { 'application/json': { schema: statusBody(['ok'], false) } } } },
    },
  },
  '/readyz': {
    get: {
      tags: ['probes'],
      summary: 'Redis reachable and workers running',
      security: [],
      responses: {
        '200': { description: 'Ready', content: { 'application/json': { schema: statusBody(['ok'], true) } } },
        '503': { description: 'Not ready; `checks` says what failed', content: { 'application/json': { schema: statusBody(['unavailable'], true) } } },
      },
    },
  },
  '/metrics': {
    get: {
      tags: ['probes'],
      summary: 'Prometheus metrics (text exposition format)',
      security: [],
      responses: { '200': { description: 'Metrics', content: { 'text/plain': { schema: { type: 'string' } } } } },
    },
  },
  '/openapi.json': {
    get: {
      tags: ['probes'],
      summary: 'This document',
      security: [],
      responses: { '200': { description: 'OpenAPI 3.1 document', content: { 'application/json': { schema: { type: 'object', required: ['openapi'] } } } } },
    },
  },
};
