/** Domain types shared by every app. Plain data: safe to serialize into jobs. */
import type { QuietHours } from './quiet-hours';

/**
 * `scheduled`: created ahead of its send-at time, not yet attempted.
 * `cancelled`: taken back by its producer before anything was sent (terminal).
 */
export const OPERATION_STATUSES = ['pending', 'scheduled', 'sending', 'sent', 'in_doubt', 'failed', 'dead', 'suppressed', 'cancelled'] as const;
export type OperationStatus = (typeof OPERATION_STATUSES)[number];

export const TERMINAL_STATUSES: readonly OperationStatus[] = ['sent', 'dead', 'suppressed', 'cancelled'];

/**
 * Why an operation that has not ended is not attempted now, and comes back at
 * a known time: `scheduled` (its send-at time, status `scheduled`),
 * `quiet_hours`, `breaker_open` (every provider of its channel behind an open
 * circuit breaker), `document` (a document it needs is not stored yet). No
 * wait is an attempt.
 */
export const WAIT_REASONS = ['scheduled', 'quiet_hours', 'breaker_open', 'document'] as const;
export type WaitReason = (typeof WAIT_REASONS)[number];

/** The waits kept as a mark on the operation (the claim given a hold, include/wait.lua): all but `scheduled`, which is a status of its own. */
export type WaitMark = Exclude<WaitReason, 'scheduled'>;

/** What ingest hands to the decision stage (the payload of a decide job). */
export interface EventInput {
  kind: 'event';
  /** The tenant of the producer key that posted it (tenant.ts); absent: the default tenant. */
  tenant?: string;
  source: string;
  eventId: string;
  type: string;
  recipients?: string[];
  data: Record<string, unknown>;
  /** When the event's notifications may leave (ms since the epoch; `sendAt` or `delaySeconds` resolved at ingest). */
  sendAt?: number;
  /** The producer's key for cancelling this event with others (`POST /v1/cancellations`). */
  cancellationKey?: string;
  /** Recipients' own time zones (IANA), for routes whose quiet hours follow the recipient. */
  timezones?: Record<string, string>;
}

/** The parsed, size-bounded summary of one mail (never the whole raw MIME). */
export interface MailInput {
  kind: 'mail';
  /** The tenant of the producer key that posted it (tenant.ts); absent: the default tenant. */
  tenant?: string;
  source: 'mail';
  mailboxId: string;
  /** Normalized Message-ID, or null when the fallback fingerprint was used. */
  messageId: string | null;
  identity: 'message-id' | 'fingerprint';
  from: string;
  to: string;
  subject: string;
  date: string;
  /** First part of the text body, for templates. */
  excerpt: string;
  /** Lower-cased header name → first value, for routing on any header. */
  headers: Record<string, string>;
  sizeBytes: number;
  /** Set when the mail was truncated or only partly parsed; never silently skipped. */
  note?: string;
}

export type IngestInput = EventInput | MailInput;

/** One decide job: a message and how it arrived first. */
export interface DecideJobData {
  messageKey: string;
  firstArrivalAt: number;
  via: string;
  input: IngestInput;
  /** W3C `traceparent` of the span that made this job, when tracing is on (libs/tracing); never part of an identity. */
  trace?: string;
}

/** One deliver job: one operation, fully rendered, so delivery needs no routing logic. */
export interface DeliverJobData {
  operationKey: string;
  messageKey: string;
  /** The message's tenant (tenant.ts), for per-tenant counts; absent: the default tenant. */
  tenant?: string;
  route: string;
  action: string;
  recipient: string;
  channel: string;
  subject: string;
  text: string;
  /** HTML body, when the route has one (email goes out as multipart text + HTML). */
  html?: string;
  /** Documents this operation needs before it may be sent (none: sent at once). */
  documents?: DocumentRef[];
  data: Record<string, unknown>;
  firstArrivalAt: number;
  /** Not before this (ms): the operation was scheduled (send-at, a route's delay). */
  dueAt?: number;
  /** Hours in which it is not sent, resolved to one zone; an attempt due inside waits for their end. */
  quietHours?: QuietHours;
  /** The route's category (opt-outs are by category and channel). */
  category?: string;
  /** The route must go (a password reset, an invoice by law): opt-outs and quiet hours do not hold it back. */
  required?: boolean;
  /** The route's priority class when it is `bulk`: the fair queue sends its tenant's other jobs first. */
  priority?: 'bulk';
  /** Came out of the fair queue between tenants: its first start frees a place in the window (docs/tenants.md). */
  moved?: true;
  /** W3C `traceparent` of the span that made this job, when tracing is on (libs/tracing); never part of an identity. */
  trace?: string;
}

/** A document an operation needs: which one, by its render operation's key. */
export interface DocumentRef {
  name: string;
  documentKey: string;
}

/**
 * One render job: generate one document of one message (jobId = document key).
 * Everything the render needs is here, so a replay can run it again as it was.
 */
export interface RenderJobData {
  documentKey: string;
  messageKey: string;
  route: string;
  name: string;
  version: string;
  format: 'pdf';
  /** The template context of the message (as for subject and text). */
  context: Record<string, unknown>;
  /** The message's first arrival (ms): the document's creation date, the same on every attempt. */
  createdAt: number;
  /** Operation keys waiting for this document (woken when it is stored or failed for good). */
  dependents: string[];
  /** W3C `traceparent` of the span that made this job, when tracing is on (libs/tracing); never part of an identity. */
  trace?: string;
}

/** An entry of the durable journal. */
export type JournalType =
  | 'sent'
  | 'in_doubt'
  | 'dead'
  | 'suppressed'
  | 'duplicate'
  | 'replayed'
  | 'scheduled'
  | 'cancelled'
  | 'deferred'
  | 'document_stored'
  | 'document_failed'
  | 'document_replayed'
  /** A provider's delivery feedback about a sent operation (delivered, bounced, …; docs/feedback.md). */
  | 'feedback';
