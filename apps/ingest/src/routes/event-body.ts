import { z } from 'zod';

/**
 * `POST /v1/events` body (docs/contract.md). `id` may come from
 * `Idempotency-Key` instead. The one definition of the event: ingest
 * validates with it and the OpenAPI document shows it (z.toJSONSchema; the
 * `meta` says in JSON Schema what a refinement says in code).
 */
export const eventBodySchema = z.object({
  id: z
    .string()
    .min(1)
    .max(512)
    .optional()
    .meta({ description: 'The producer\'s stable event id (or the `Idempotency-Key` header). Required, from one or the other.' }),
  source: z
    .string()
    .min(1)
    .max(200)
    .refine((s) => s !== 'mail', 'source "mail" is reserved for mail ingestion')
    .meta({ not: { const: 'mail' } }),
  type: z.string().min(1).max(200),
  recipients: z.array(z.string().trim().min(1).max(512)).max(1000).optional(),
  data: z.record(z.string(), z.unknown()).default({}),
});

/** A valid event body, as `eventBodySchema` outputs it. */
export type EventBody = z.output<typeof eventBodySchema>;
