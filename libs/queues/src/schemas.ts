import { z } from 'zod';
import { TENANT_ID, type DecideJobData } from '@singleshot/core';

/**
 * Job payloads are validated at the worker boundary: a job written by an older
 * or foreign producer that does not match is poison and goes to the DLQ at once.
 */
const hexKey = z.string().regex(/^[0-9a-f]{64}$/, 'expected a 64-hex key');
/** A job's W3C `traceparent` (libs/tracing); a malformed one starts a new trace, so it is only bounded here. */
const traceField = z.string().max(128).optional();
/** The tenant of a message's producer key (absent: the default tenant). */
const tenantField = z.string().regex(TENANT_ID).optional();

export const eventInputSchema = z.object({
  kind: z.literal('event'),
  tenant: tenantField,
  source: z.string().min(1),
  eventId: z.string().min(1),
  type: z.string().min(1),
  recipients: z.array(z.string().min(1)).optional(),
  data: z.record(z.string(), z.unknown()),
  sendAt: z.number().int().nonnegative().optional(),
  cancellationKey: z.string().min(1).optional(),
  timezones: z.record(z.string(), z.string().min(1)).optional(),
});

export const mailInputSchema = z.object({
  kind: z.literal('mail'),
  tenant: tenantField,
  source: z.literal('mail'),
  mailboxId: z.string().min(1),
  messageId: z.string().nullable(),
  identity: z.enum(['message-id', 'fingerprint']),
  from: z.string(),
  to: z.string(),
  subject: z.string(),
  date: z.string(),
  excerpt: z.string(),
  headers: z.record(z.string(), z.string()),
  sizeBytes: z.number().int().nonnegative(),
  note: z.string().optional(),
});

export const decideJobSchema = z.object({
  messageKey: hexKey,
  firstArrivalAt: z.number().int().positive(),
  via: z.string().min(1),
  input: z.discriminatedUnion('kind', [eventInputSchema, mailInputSchema]),
  trace: traceField,
});

/**
 * A decide job of the `batch` kind, as ingest writes it: the first arrivals of
 * several messages accepted in one event-loop turn that share a decide
 * partition (batch-jobs.ts). The worker checks each entry on its own against
 * `decideJobSchema` (batch-runner.ts), so one bad entry does not
 * sink the others; there is no schema of the batch as a whole.
 */
export interface DecideBatchJobData {
  messages: DecideJobData[];
}

export const deliverJobSchema = z.object({
  operationKey: hexKey,
  messageKey: hexKey,
  tenant: tenantField,
  route: z.string().min(1),
  action: z.string().min(1),
  recipient: z.string().min(1),
  channel: z.string().min(1),
  subject: z.string(),
  text: z.string(),
  html: z.string().optional(),
  documents: z.array(z.object({ name: z.string().min(1), documentKey: hexKey })).optional(),
  data: z.record(z.string(), z.unknown()),
  firstArrivalAt: z.number().int().positive(),
  dueAt: z.number().int().nonnegative().optional(),
  quietHours: z.object({ start: z.string().min(1), end: z.string().min(1), timezone: z.string().min(1) }).optional(),
  category: z.string().min(1).optional(),
  required: z.boolean().optional(),
  priority: z.literal('bulk').optional(),
  moved: z.literal(true).optional(),
  trace: traceField,
});

/**
 * A deliver job of the `batch` kind: several operations (of one message or of
 * several) that share a deliver partition and need no document (batch-jobs.ts). Each
 * operation is still claimed, sent and committed on its own.
 */
export const deliverBatchJobSchema = z.object({
  operations: z.array(deliverJobSchema).min(1),
});

export type DeliverBatchJobData = z.infer<typeof deliverBatchJobSchema>;

/** A digest's close job: which digest of which group, and the route and recipient its flush goes to. */
export const digestCloseJobSchema = z.object({
  group: hexKey,
  seq: z.number().int().positive(),
  route: z.string().min(1),
  recipient: z.string().min(1),
  key: z.string(),
});

export type DigestCloseJobData = z.infer<typeof digestCloseJobSchema>;

export const renderJobSchema = z.object({
  documentKey: hexKey,
  messageKey: hexKey,
  route: z.string().min(1),
  name: z.string().min(1),
  version: z.string().min(1),
  format: z.literal('pdf'),
  context: z.record(z.string(), z.unknown()),
  createdAt: z.number().int().positive(),
  dependents: z.array(hexKey),
  trace: traceField,
});

export const attemptRecordSchema = z.object({
  at: z.number(),
  attempt: z.number(),
  fence: z.string(),
  outcome: z.string(),
  provider: z.string().optional(),
  externalId: z.string().optional(),
  errorCode: z.string().optional(),
  error: z.string().optional(),
  durationMs: z.number().optional(),
  note: z.string().optional(),
});

/** The DLQ record: everything needed to understand and replay a dead operation. */
export const deadJobSchema = z.object({
  operationKey: z.string().min(1),
  job: deliverJobSchema.or(z.record(z.string(), z.unknown())),
  reason: z.string().min(1),
  error: z.object({ code: z.string(), message: z.string() }),
  attempts: z.array(attemptRecordSchema),
  diedAt: z.number(),
});

export type DeadJobData = z.infer<typeof deadJobSchema>;

/** Flattens zod issues into `path: message` lines for errors and DLQ records. */
export function formatIssues(error: z.ZodError): string[] {
  return error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
}
