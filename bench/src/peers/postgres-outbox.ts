import { EventEmitter } from 'node:events';
import pg from 'pg';
import { providerClient, startFront } from './front';
import type { PeerOptions } from './options';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS processed_messages (
  message_key text PRIMARY KEY,
  received_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS outbox (
  id bigserial PRIMARY KEY,
  operation_key text NOT NULL UNIQUE,
  recipient text NOT NULL,
  event text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  sent_at timestamptz
);
CREATE INDEX IF NOT EXISTS outbox_unsent ON outbox (id) WHERE sent_at IS NULL;
`;

/** Senders and rows per batch: SENDERS × BATCH provider calls in flight at most. */
const SENDERS = 4;

/**
 * (c) The seeds' PostgreSQL design: per arrival one transaction (insert into
 * processed_messages ON CONFLICT DO NOTHING; the first one also writes the
 * outbox rows), answered after COMMIT; senders drain the outbox in batches
 * with FOR UPDATE SKIP LOCKED, send, and mark the rows sent in the same
 * transaction. Sent rows are kept (the record that outlives redelivery).
 */
export async function startPostgresOutbox(o: PeerOptions): Promise<void> {
  const pool = new pg.Pool({ connectionString: o.postgresUrl, max: 16 });
  await pool.query(SCHEMA);
  const send = providerClient(o.sinkUrl, o.concurrency);
  const wake = new EventEmitter();
  wake.setMaxListeners(0);
  const batch = Math.max(1, Math.ceil(o.concurrency / SENDERS));

  const sender = async (): Promise<void> => {
    const client = new pg.Client({ connectionString: o.postgresUrl });
    await client.connect();
    for (;;) {
      try {
        await client.query('BEGIN');
        const rows = await client.query<{ id: string; operation_key: string; recipient: string; event: string }>(
          'SELECT id, operation_key, recipient, event FROM outbox WHERE sent_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED',
          [batch],
        );
        if (rows.rowCount === 0) {
          await client.query('COMMIT');
          // Nothing to send: wait for an arrival's commit, or poll again after 50 ms.
          await new Promise<void>((resolve) => {
            const timer = setTimeout(done, 50);
            function done() {
              clearTimeout(timer);
              wake.off('work', done);
              resolve();
            }
            wake.once('work', done);
          });
          continue;
        }
        await Promise.all(rows.rows.map((r) => send(r.operation_key, r.recipient, r.event)));
        await client.query('UPDATE outbox SET sent_at = now() WHERE id = ANY($1::bigint[])', [rows.rows.map((r) => r.id)]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        console.error('sender:', String(err));
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  for (let i = 0; i < SENDERS; i++) void sender();

  await startFront(o.port, async (a) => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const first = await client.query('INSERT INTO processed_messages (message_key) VALUES ($1) ON CONFLICT DO NOTHING', [a.id]);
      if (first.rowCount === 1) {
        const values = a.recipients.map((_, i) => `($${i * 3 + 1}, $${i * 3 + 2}, $${i * 3 + 3})`).join(', ');
        const params = a.recipients.flatMap((to) => [`${a.id}:${to}`, to, a.data.benchEvent]);
        await client.query(`INSERT INTO outbox (operation_key, recipient, event) VALUES ${values}`, params);
      }
      await client.query('COMMIT');
      if (first.rowCount === 1) wake.emit('work');
      return first.rowCount === 1 ? 'accepted' : 'duplicate';
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  });
}
