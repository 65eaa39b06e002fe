import { DEFAULT_OUTBOX_CHANNEL, DEFAULT_OUTBOX_TABLE, OutboxError, checkTableName } from './ddl';

/** What `enqueue` needs of a connection: a `pg` Client or PoolClient fits. */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<unknown>;
}

/** One event, as `POST /v1/events` takes it; `id` is required (it is what makes a retry the same event). */
export interface OutboxEvent {
  id: string;
  source: string;
  type: string;
  recipients?: string[];
  data?: Record<string, unknown>;
}

export interface EnqueueOptions {
  /** Default `singleshot_outbox`. */
  table?: string;
  /** The relay's `LISTEN` channel; default `singleshot_outbox`. */
  channel?: string;
}

const isText = (v: unknown, max: number): v is string => typeof v === 'string' && v.length >= 1 && v.length <= max;

/** Throws OutboxError `INVALID_OUTBOX_EVENT` for an event singleshot would refuse (the same bounds as ingest). */
export function checkOutboxEvent(event: OutboxEvent): void {
  const problems: string[] = [];
  if (!isText(event.id, 512)) problems.push('id: a string of 1 to 512 characters');
  if (!isText(event.source, 200) || event.source === 'mail') problems.push('source: a string of 1 to 200 characters, not "mail"');
  if (!isText(event.type, 200)) problems.push('type: a string of 1 to 200 characters');
  if (event.recipients !== undefined && !(Array.isArray(event.recipients) && event.recipients.length <= 1000 && event.recipients.every((r) => isText(typeof r === 'string' ? r.trim() : r, 512)))) {
    problems.push('recipients: at most 1000 strings of 1 to 512 characters');
  }
  if (event.data !== undefined && (event.data === null || typeof event.data !== 'object' || Array.isArray(event.data))) problems.push('data: an object');
  if (problems.length > 0) throw new OutboxError(`invalid outbox event: ${problems.join('; ')}`, 'INVALID_OUTBOX_EVENT');
}

/**
 * Inserts `event` into the outbox on `client`, inside the caller's open
 * transaction, and notifies the relay. Both take effect only when that
 * transaction commits: a rolled-back business change never notifies anyone.
 * Call it between your `BEGIN` and `COMMIT`, on the same client.
 */
export async function enqueue(client: Queryable, event: OutboxEvent, options: EnqueueOptions = {}): Promise<void> {
  checkOutboxEvent(event);
  const table = checkTableName(options.table ?? DEFAULT_OUTBOX_TABLE);
  const channel = options.channel ?? DEFAULT_OUTBOX_CHANNEL;
  await client.query(`INSERT INTO ${table} (event_id, source, type, recipients, data) VALUES ($1, $2, $3, $4, $5)`, [
    event.id,
    event.source,
    event.type,
    event.recipients === undefined ? null : JSON.stringify(event.recipients),
    JSON.stringify(event.data ?? {}),
  ]);
  // NOTIFY is transactional too: delivered at commit, dropped at rollback.
  await client.query('SELECT pg_notify($1, $2)', [channel, table]);
}

