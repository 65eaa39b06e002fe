import { z } from 'zod';
import { ApiError } from './errors';

/** Operation and message keys are sha256 hex digests (docs/protocol.md "Names"). */
export const hexKeySchema = z
  .string()
  .regex(/^[0-9a-f]{64}$/, 'expected a key of 64 lower-case hex characters (a sha256 digest)');

/** `:key` of a path: an operation, message or document key. */
export const keyParams = z.strictObject({ key: hexKeySchema });

/** A point in time: epoch milliseconds or an ISO 8601 date-time with a zone (`Z` or an offset). */
export const instantSchema = z.union([
  z
    .string()
    .regex(/^\d{1,15}$/)
    .transform(Number),
  z.iso.datetime({ offset: true }).transform((s) => Date.parse(s)),
], { error: 'expected epoch milliseconds or an ISO 8601 date-time such as 2025-01-31T12:00:00Z' });

/** `?limit=` of a list: 1..1000, default 100, nothing else. */
export const listLimitQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(1000).default(100).meta({ description: '1..1000, default 100' }) });

export const JOURNAL_DEFAULT_WINDOW_MS = 3_600_000;
export const JOURNAL_MAX_LIMIT = 10_000;

export const journalQuerySchema = z
  .strictObject({
    from: instantSchema.optional().meta({ description: 'Epoch ms or an ISO 8601 date-time with a zone (default: an hour before `to`)' }),
    to: instantSchema.optional().meta({ description: 'Epoch ms or an ISO 8601 date-time with a zone (default: now)' }),
    limit: z
      .string()
      .regex(/^\d+$/, 'expected a positive integer')
      .transform(Number)
      .pipe(z.int().min(1).max(JOURNAL_MAX_LIMIT))
      .optional()
      .meta({ description: `1..${JOURNAL_MAX_LIMIT}, default 100` }),
  })
  .transform((q, ctx) => {
    const to = q.to ?? Date.now();
    const from = q.from ?? to - JOURNAL_DEFAULT_WINDOW_MS;
    if (from > to) ctx.addIssue({ code: 'custom', path: ['from'], message: 'from must not be after to' });
    return { from, to, limit: q.limit ?? 100 };
  });

/** Parses request input or throws a 400 listing every problem by path. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, where: 'path' | 'query' | 'body'): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const details = result.error.issues.map((issue) => ({
    path: [where, ...issue.path.map(String)].join('.'),
    message: issue.message,
  }));
  throw new ApiError(
    400,
    'INVALID_REQUEST',
    `invalid ${where}: ${details.map((d) => `${d.path}: ${d.message}`).join('; ')}`,
    details,
  );
}
