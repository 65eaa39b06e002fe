import { Client } from 'pg';
import type { PostgresOutboxSourceConfig, SourceMapping } from '@singleshot/config';
import { deriveEvent } from '../derive';
import { sleep } from '../hand-off';
import { reconnectDelay, type Source, type SourceDeps } from '../source';

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
 * polls every `pollIntervalMs` in case a notification was missed.
 */
export function postgresOutboxSource(config: PostgresOutboxSourceConfig, deps: SourceDeps): Source {
  const logger = deps.logger.child({ source: config.name });
  let worker: Client | undefined;
  let listener: Client | undefined;
  let stopped = false;
  let running: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  let woken = false;
  let lastQueryOk = false;

  const connect = async (): Promise<Client> => {
    const client = new Client({ connectionString: config.url, application_name: `singleshot-relay-${config.name}` });
    // A dropped connection fails its queries; the loop reconnects. Without a listener the error would end the process.
    client.on('error', () => undefined);
    await client.connect();
    return client;
  };

  const ensureConnected = async (): Promise<Client> => {
    if (!listener) {
      const l = await connect();
      l.on('notification', () => {
        woken = true;
        wake?.();
      });
      l.on('end', () => {
        if (listener === l) listener = undefined;
      });
      await l.query(`LISTEN "${config.channel}"`);
      listener = l;
    }
    if (!worker) {
      const w = await connect();
      w.on('end', () => {
        if (worker === w) worker = undefined;
      });
      worker = w;
    }
    return worker;
  };

  const drop = async () => {
    const [w, l] = [worker, listener];
    worker = undefined;
    listener = undefined;
    await Promise.all([w?.end().catch(() => undefined), l?.end().catch(() => undefined)]);
  };

  /** One claim: returns how many rows it took. */
  const claimBatch = async (client: Client): Promise<number> => {
    await client.query('BEGIN');
    try {
      const { rows } = await client.query<OutboxRow>(
        `SELECT seq, event_id, source, type, recipients, data FROM ${config.table} ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [config.batchSize],
      );
      lastQueryOk = true;
      const outcomes = await Promise.allSettled(
        rows.map((row) => {
          const body = { id: row.event_id, type: row.type, recipients: row.recipients, data: row.data };
          return deps.handOff.handle(config.name, deriveEvent(rowMapping(row.source), { body }), { key: `${config.table}:${row.seq}`, details: { type: 'postgres-outbox', table: config.table, seq: row.seq }, body: JSON.stringify(body) }, { signal: deps.signal });
        }),
      );
      // Only rows whose acceptance resolved (accepted, duplicate, or recorded dead) leave the outbox.
      const done = rows.filter((_, i) => outcomes[i]?.status === 'fulfilled').map((row) => row.seq);
      if (done.length > 0) await client.query(`DELETE FROM ${config.table} WHERE seq = ANY($1::bigint[])`, [done]);
      await client.query('COMMIT');
      return rows.length;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  };

  const waitForWork = (ms: number) =>
    new Promise<void>((resolve) => {
      if (woken || stopped) return resolve();
      const timer = setTimeout(done, ms);
      wake = done;
      function done() {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
    });

  const loop = async (): Promise<void> => {
    let failures = 0;
    while (!stopped) {
      try {
        const client = await ensureConnected();
        woken = false;
        const taken = await claimBatch(client);
        failures = 0;
        // A full batch: more may be waiting, go on at once; else sleep until notified or the poll.
        if (taken < config.batchSize && !stopped) await waitForWork(config.pollIntervalMs);
      } catch (err) {
        if (stopped) break;
        lastQueryOk = false;
        failures++;
        if (failures === 1 || failures % 20 === 0) logger.warn({ event: 'source_unreachable', err: { message: (err as Error).message } }, 'claiming outbox rows failed; retrying');
        await drop();
        await sleep(reconnectDelay(failures), deps.signal);
      }
    }
  };

  return {
    name: config.name,
    start() {
      running = loop();
    },
    async stop() {
      stopped = true;
      wake?.();
      await running;
      await drop();
    },
    reachable: () => lastQueryOk && listener !== undefined && worker !== undefined,
    async lag() {
      let client: Client | undefined;
      try {
        client = await connect();
        const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${config.table}`);
        return Number(rows[0]?.n ?? 0);
      } catch {
        return undefined;
      } finally {
        await client?.end().catch(() => undefined);
      }
    },
  };
}
