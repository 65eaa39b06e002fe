import { z } from 'zod';
import type { SourceMapping } from '@singleshot/config';

/** A message as a source read it, before it is an event. */
export interface RawMessage {
  /** The body: bytes (JSON expected) or an already parsed value (outbox rows). */
  body: Buffer | string | unknown;
  /** Headers (RabbitMQ, NATS), AMQP properties, or stream entry fields, by name. */
  headers?: Record<string, unknown>;
  properties?: Record<string, unknown>;
  fields?: Record<string, unknown>;
  /** The record key (Kafka), when it has one. */
  key?: Buffer | string | null;
  /** An id the origin itself names (NATS `Nats-Msg-Id`), used when the configured place has none. */
  fallbackId?: string;
}

/** The event a message carries, as ingest's `POST /v1/events` body would. */
export interface SourceEvent {
  id: string;
  source: string;
  type: string;
  recipients?: string[];
  data: Record<string, unknown>;
}

/** The event, or why the message can never be one (poison). */
export type Derived = { ok: true; event: SourceEvent } | { ok: false; problem: string };

/** The same bounds as ingest's event body (apps/ingest event-body.ts), so a relayed event is one ingest would take. */
const eventSchema = z.object({
  id: z.string().min(1).max(512),
  source: z.string().min(1).max(200).refine((s) => s !== 'mail', 'source "mail" is reserved for mail ingestion'),
  type: z.string().min(1).max(200),
  recipients: z.array(z.string().trim().min(1).max(512)).max(1000).optional(),
  data: z.record(z.string(), z.unknown()),
});

/** The value at a `$`/`$.a.b` path, or undefined. */
export function atPath(value: unknown, path: string): unknown {
  if (path === '$') return value;
  let at = value;
  for (const key of path.slice(2).split('.')) {
    if (at === null || typeof at !== 'object' || Array.isArray(at) || !Object.hasOwn(at, key)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

function parseBody(body: RawMessage['body']): { ok: true; value: unknown } | { ok: false } {
  if (!Buffer.isBuffer(body) && typeof body !== 'string') return { ok: true, value: body };
  try {
    return { ok: true, value: JSON.parse(Buffer.isBuffer(body) ? body.toString('utf8') : body) as unknown };
  } catch {
    return { ok: false };
  }
}

/** An id is a non-empty string, or an integer (written as its decimal digits); anything else is no id. */
function idOf(value: unknown): string | undefined {
  if (typeof value === 'string' && value.trim() !== '') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  if (Buffer.isBuffer(value) && value.length > 0) return value.toString('utf8');
  return undefined;
}

function headerOf(headers: Record<string, unknown> | undefined, name: string): unknown {
  if (!headers) return undefined;
  if (Object.hasOwn(headers, name)) return headers[name];
  const lower = name.toLowerCase();
  const key = Object.keys(headers).find((k) => k.toLowerCase() === lower);
  return key === undefined ? undefined : headers[key];
}

/**
 * Derives the event of one message: the id from where the source config says
 * (never invented here: an invented id would make every redelivery a new
 * event), type, recipients and data from the mapping's paths, then ingest's
 * bounds. A message that fails is poison: it will fail the same way on every
 * redelivery.
 */
export function deriveEvent(config: SourceMapping, message: RawMessage): Derived {
  const parsed = parseBody(message.body);
  if (!parsed.ok) return { ok: false, problem: 'the body is not valid JSON' };
  const body = parsed.value;
  const idSpec = config.id;
  let rawId: unknown;
  if (idSpec.from === 'json') rawId = atPath(body, idSpec.path);
  else if (idSpec.from === 'header') rawId = headerOf(message.headers, idSpec.name);
  else if (idSpec.from === 'property') rawId = message.properties?.[idSpec.name];
  else if (idSpec.from === 'key') rawId = message.key ?? undefined;
  else rawId = message.fields?.[idSpec.name];
  const id = idOf(rawId) ?? message.fallbackId;
  if (!id) return { ok: false, problem: `no event id at ${describeId(config.id)}` };
  const { mapping } = config;
  const type = mapping.typeValue ?? atPath(body, mapping.type ?? '$.type');
  const recipients = atPath(body, mapping.recipients);
  const data = atPath(body, mapping.data);
  const result = eventSchema.safeParse({
    id,
    source: config.source,
    type,
    ...(recipients === undefined || recipients === null ? {} : { recipients }),
    data: data === undefined || data === null ? {} : data,
  });
  if (!result.success) {
    return { ok: false, problem: result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ') };
  }
  return { ok: true, event: result.data };
}

function describeId(id: SourceMapping['id']): string {
  if (id.from === 'json') return `${id.path} in the body`;
  return id.from === 'key' ? 'the record key' : `${id.from} "${id.name}"`;
}
