import { z } from 'zod';
import { isValidTimeZone } from '@singleshot/core';

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
  recipients: z
    .array(
      z.union([
        z.string().trim().min(1).max(512),
        z.strictObject({
          address: z.string().trim().min(1).max(512),
          timezone: z.string().refine(isValidTimeZone, 'expected an IANA time zone such as Europe/Berlin').optional(),
        }),
      ]),
    )
    .max(1000)
    .optional()
    .meta({ description: 'Addresses or ids; `{ "address", "timezone" }` gives a recipient\'s own IANA zone (quiet hours that follow the recipient).' }),
  data: z.record(z.string(), z.unknown()).default({}),
  sendAt: z.iso
    .datetime({ offset: true })
    .optional()
    .meta({ description: 'When to send, ISO 8601 with an offset; the past means now, past `scheduling.maxHorizonDays` is refused (docs/scheduling.md).' }),
  delaySeconds: z.int().min(0).optional().meta({ description: 'Send this many seconds after ingest accepted the event (instead of `sendAt`).' }),
  cancellationKey: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .meta({ description: 'A key to cancel this event by, with others of its source that carry it (`POST /v1/cancellations`).' }),
});

/** A valid event body, as `eventBodySchema` outputs it. */
export type EventBody = z.output<typeof eventBodySchema>;
