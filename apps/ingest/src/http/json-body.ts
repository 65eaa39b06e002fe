import type { z } from 'zod';
import type { ErrorCode } from '@singleshot/core';
import { jsonDepth } from '@singleshot/http';
import { formatIssues } from '@singleshot/queues';
import type { JsonBody } from './route';

/** A JSON body as its schema outputs it, or the 400 that refuses it. */
export type JsonOutcome<T> = { ok: true; value: T } | { ok: false; code: ErrorCode; message: string; details?: unknown };

/**
 * Parses and validates a JSON body: refused when nested deeper than
 * `maxDepth` (counted without parsing), when it is not JSON
 * (`INVALID_JSON`), or when `schema` rejects it (its issues as details).
 */
export function parseJsonBody<S extends z.ZodType>(body: Buffer, spec: JsonBody<S>): JsonOutcome<z.output<S>> {
  const text = body.toString('utf8');
  if (jsonDepth(text, spec.maxDepth) > spec.maxDepth) {
    return {
      ok: false,
      code: spec.invalid.code,
      message: `the JSON body is nested deeper than ${spec.maxDepth} levels (ingest.maxJsonDepth)`,
      details: { limit: 'maxJsonDepth', max: spec.maxDepth },
    };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, code: 'INVALID_JSON', message: 'the body is not valid JSON' };
  }
  const parsed = spec.schema.safeParse(json);
  if (!parsed.success) return { ok: false, code: spec.invalid.code, message: spec.invalid.message, details: formatIssues(parsed.error) };
  return { ok: true, value: parsed.data };
}
