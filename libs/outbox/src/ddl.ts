/** The outbox table and notification channel singleshot's relay reads by default. */
export const DEFAULT_OUTBOX_TABLE = 'singleshot_outbox';
export const DEFAULT_OUTBOX_CHANNEL = 'singleshot_outbox';

const TABLE_NAME = /^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$/;

/** Throws OutboxError `INVALID_OUTBOX_TABLE` unless `table` is a plain (optionally schema-qualified) lower-case name. */
export function checkTableName(table: string): string {
  if (!TABLE_NAME.test(table)) throw new OutboxError(`"${table}" is not a plain lower-case table name`, 'INVALID_OUTBOX_TABLE');
  return table;
}

/**
 * The DDL of an outbox table (idempotent: `IF NOT EXISTS`). One row is one
 * event; `seq` orders the rows, and the relay deletes a row only once
 * singleshot accepted its event. The same event enqueued twice is two rows
 * and one notification: acceptance deduplicates by (source, event_id).
 */
export function outboxDdl(table: string = DEFAULT_OUTBOX_TABLE): string {
  checkTableName(table);
  return `CREATE TABLE IF NOT EXISTS ${table} (
  seq        bigserial PRIMARY KEY,
  event_id   text NOT NULL,
  source     text NOT NULL,
  type       text NOT NULL,
  recipients jsonb,
  data       jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
)`;
}

/** An outbox error; `code` says which. */
export class OutboxError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = 'OutboxError';
  }
}
