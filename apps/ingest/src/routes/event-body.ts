import { z } from 'zod';

/** `POST /v1/events` body (docs/contract.md). `id` may come from `Idempotency-Key` instead. */
export const eventBodySchema = z.object({
  id: z.string().min(1).max(512).optional(),
  source: z
    .string()
    .min(1)
    .max(200)
    .refine((s) => s !== 'mail', 'source "mail" is reserved for mail ingestion'),
  type: z.string().min(1).max(200),
  recipients: z.array(z.string().trim().min(1).max(512)).max(1000).optional(),
  data: z.record(z.string(), z.unknown()).default({}),
});

/** A valid event body, as `eventBodySchema` outputs it. */
export type EventBody = z.output<typeof eventBodySchema>;

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * The event of a body `eventBodySchema` certainly accepts, checked by hand
 * and equal to what the schema would output (unknown keys dropped,
 * recipients trimmed, `data` defaulted to `{}`); undefined for anything it is
 * not sure of, which then goes through the schema (and gets the schema's own
 * error details). Why: zod was the largest item of ingest's own code in the
 * profile of the producer hot path. The checks mirror the schema one for one,
 * on the safe side where they differ: a length in UTF-16 units is never less
 * than zod's count in code points, so a string near a limit with astral
 * characters goes to the schema. event-body.test.ts compares both on a corpus
 * of edge cases.
 */
export function plainEventBody(json: unknown): EventBody | undefined {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return undefined;
  const body = json as Record<string, unknown>;
  const { id, source, type, recipients, data } = body;
  if (id !== undefined && !(typeof id === 'string' && id.length >= 1 && id.length <= 512)) return undefined;
  if (!(typeof source === 'string' && source.length >= 1 && source.length <= 200 && source !== 'mail')) return undefined;
  if (!(typeof type === 'string' && type.length >= 1 && type.length <= 200)) return undefined;
  let trimmed: string[] | undefined;
  if (recipients !== undefined) {
    if (!Array.isArray(recipients) || recipients.length > 1000) return undefined;
    trimmed = new Array<string>(recipients.length);
    for (let i = 0; i < recipients.length; i++) {
      const r: unknown = recipients[i];
      if (typeof r !== 'string') return undefined;
      const t = r.trim();
      if (t.length < 1 || t.length > 512) return undefined;
      trimmed[i] = t;
    }
  }
  let record: Record<string, unknown>;
  if (data === undefined) record = {};
  else {
    // The schema copies a record without its own `__proto__` key; such a body takes the schema's way.
    if (typeof data !== 'object' || data === null || Array.isArray(data) || Object.getPrototypeOf(data) !== Object.prototype || hasOwn.call(data, '__proto__')) return undefined;
    record = data as Record<string, unknown>;
  }
  // The schema's key order, so even the serialized job data is the same.
  if (id === undefined) return trimmed ? { source, type, recipients: trimmed, data: record } : { source, type, data: record };
  return trimmed ? { id, source, type, recipients: trimmed, data: record } : { id, source, type, data: record };
}
