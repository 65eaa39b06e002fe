import { Client } from 'pg';
import type { PostgresOutboxSourceConfig, SourceMapping } from '@singleshot/config';
import { deriveEvent } from '../derive';
import type { Source, SourceDeps } from '../source';
import { sourceLoop, type SourceAdapter } from '../source-loop';
import type { SourceSession } from '../source-session';

interface OutboxRow {
  seq: string;
  event_id: string;
  source: string;
  type: string;
  recipients: unknown;
  data: unknown;
}

/** Rows carry their own source; the body below is the row itself. */
const rowMapping = (source: string): SourceMapping => ({
  source,
  id: { from: 'json', path: '$.id' },
  mapping: { type: '$.type', recipients: '$.recipients', data: '$.data' },
});

/**
 * A transactional outbox (libs/outbox) in PostgreSQL (docs/sources.md). In
 * one transaction the relay claims up to `batchSize` rows with
 * `FOR UPDATE SKIP LOCKED` (parallel relays take disjoint rows), hands each to
 * acceptance, deletes the rows accepted and commits. A relay that dies
 * mid-batch aborts its transaction: its rows unlock and are claimed again, a
 * duplicate arrival. It wakes on `LISTEN` (enqueue notifies at commit) and
 * polls every `pollIntervalMs` in case a notification was missed. A failed
 * query ends the connection; the source loop (source-loop.ts) reconnects.
 */
export function postgresOutboxSource(config: PostgresOutboxSourceConfig, deps: SourceDeps): Source {
  let worker: Client | undefined;
  let listener: Client | undefined;
  let wake: (() => void) | undefined;
  let woken = false;
  let lastQueryOk = false;

  const connectClient = async (): Promise<Client> => {
    const client = new Client({ connectionString: config.url, application_name: `singleshot-relay-${config.name}` });
    // A dropped connection fails its queries; the loop reconnects. Without a listener the error would end the process.
    client.on('error', () => undefined);
    await client.connect();
    return client;
  };

  /** One claim: returns how many rows it took. */
  const claimBatch = async (session: SourceSession, client: Client): Promise<number> => {
    await client.query('BEGIN');
    try {
      const { rows } = await client.query<OutboxRow>(
        `SELECT seq, event_id, source, type, recipients, data FROM ${config.table} ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [config.batchSize],
      );
      lastQueryOk = true;
      const settled = await Promise.all(
        rows.map((row) => {
          const body = { id: row.event_id, type: row.type, recipients: row.recipients, data: row.data };
          return session.accept(deriveEvent(rowMapping(row.source), { body }), { key: `${config.table}:${row.seq}`, details: { type: 'postgres-outbox', table: config.table, seq: row.seq }, body: JSON.stringify(body) });
        }),
      );
      // Only rows whose acceptance resolved (accepted, duplicate, or recorded dead) leave the outbox.
      const done = rows.filter((_, i) => settled[i]).map((row) => row.seq);
      if (done.length > 0) await client.query(`DELETE FROM ${config.table} WHERE seq = ANY($1::bigint[])`, [done]);
      await client.query('COMMIT');
      return rows.length;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  };

  const waitForWork = (session: SourceSession, ms: number) =>
    new Promise<void>((resolve) => {
      if (woken || session.stopping) return resolve();
      const timer = setTimeout(done, ms);
      wake = done;
      function done() {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
    });

  const adapter: SourceAdapter = {
    name: config.name,
    origin: 'PostgreSQL',
    async connect() {
      const l = await connectClient();
      listener = l;
      l.on('notification', () => {
        woken = true;
        wake?.();
      });
      l.on('end', () => {
        if (listener === l) listener = undefined;
      });
      await l.query(`LISTEN "${config.channel}"`);
      const w = await connectClient();
      worker = w;
      w.on('end', () => {
        if (worker === w) worker = undefined;
      });
      // A missing table fails here, as an unreachable origin, not once per claim.
      await w.query(`SELECT 1 FROM ${config.table} LIMIT 0`);
      return { table: config.table, channel: config.channel };
    },
    async consume(session) {
      while (!session.stopping) {
        const client = worker;
        // A connection ended: this one is over, the loop connects anew.
        if (!client || !listener) return;
        woken = false;
        const taken = await claimBatch(session, client);
        // A full batch: more may be waiting, go on at once; else sleep until notified or the poll.
        if (taken < config.batchSize) await waitForWork(session, config.pollIntervalMs);
      }
    },
    interrupt: () => wake?.(),
    async disconnect() {
      const [w, l] = [worker, listener];
      worker = undefined;
      listener = undefined;
      lastQueryOk = false;
      await Promise.all([w?.end().catch(() => undefined), l?.end().catch(() => undefined)]);
    },
    reachable: () => lastQueryOk && listener !== undefined && worker !== undefined,
    async lag() {
      let client: Client | undefined;
      try {
        client = await connectClient();
        const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${config.table}`);
        return Number(rows[0]?.n ?? 0);
      } catch {
        return undefined;
      } finally {
        await client?.end().catch(() => undefined);
      }
    },
  };
  return sourceLoop(adapter, deps);
}
