import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import type { NatsSourceConfig } from '@singleshot/config';
import { deriveEvent } from '../derive';
import { sleep } from '../hand-off';
import { reconnectDelay, type Source, type SourceDeps } from '../source';

/**
 * The consumer's ack wait: `ackWaitMs` (default 30 s), and at least the
 * acceptance deadline plus 5 s, so one acceptance attempt never outlives it;
 * in-progress acks (every third of it, and between attempts while Redis is
 * away) keep slower acceptances from being redelivered meanwhile.
 */
export function natsAckWaitMs(config: Pick<NatsSourceConfig, 'ackWaitMs'>, acceptanceDeadlineMs: number): number {
  return Math.max(config.ackWaitMs ?? 30_000, acceptanceDeadlineMs + 5_000);
}

/**
 * A NATS JetStream stream through a durable pull consumer (docs/sources.md):
 * explicit acks, sent only after acceptance resolved; at most `concurrency`
 * unacknowledged messages; `Nats-Msg-Id` as the event id when the configured
 * place has none; `term` for poison, so it is never redelivered. The client
 * reconnects by itself after a server restart and the consumer resumes.
 */
export function natsSource(config: NatsSourceConfig, deps: SourceDeps): Source {
  const logger = deps.logger.child({ source: config.name });
  const ackWaitMs = natsAckWaitMs(config, deps.acceptanceDeadlineMs);
  let nc: NatsConnection | undefined;
  let messages: ConsumerMessages | undefined;
  let connected = false;
  let stopped = false;
  let running: Promise<void> | undefined;
  const inFlight = new Set<Promise<void>>();

  const handle = async (m: JsMsg): Promise<void> => {
    const headers: Record<string, unknown> = {};
    for (const key of m.headers?.keys() ?? []) headers[key] = m.headers?.get(key);
    const msgId = m.headers?.get('Nats-Msg-Id');
    const derived = deriveEvent(config, { body: Buffer.from(m.data), headers, ...(msgId ? { fallbackId: msgId } : {}) });
    // In-progress acks while the acceptance runs: the ack wait restarts each time.
    const keepAlive = setInterval(() => m.working(), Math.max(1_000, Math.floor(ackWaitMs / 3)));
    try {
      const outcome = await deps.handOff.handle(
        config.name,
        derived,
        { key: `${config.stream}:${m.seq}`, details: { type: 'nats', stream: config.stream, seq: m.seq, subject: m.subject }, body: Buffer.from(m.data).toString('utf8') },
        { signal: deps.signal, onWait: () => m.working() },
      );
      // No reason text: servers before 2.10.4 do not take one and would leave the message unacknowledged.
      if (outcome === 'invalid') m.term();
      // ackAck waits for the server's confirmation; if it is lost the message comes again, a duplicate arrival.
      else await m.ackAck().catch(() => false);
    } catch {
      // Stopping: left unacknowledged, redelivered after the ack wait.
    } finally {
      clearInterval(keepAlive);
    }
  };

  const session = async (): Promise<void> => {
    const conn = await connect({ servers: config.servers, name: `singleshot-relay-${config.name}`, maxReconnectAttempts: -1, reconnectTimeWait: 500, ...natsAuth(config) });
    nc = conn;
    connected = true;
    void (async () => {
      for await (const s of conn.status()) {
        if (s.type === 'disconnect') connected = false;
        else if (s.type === 'reconnect') connected = true;
      }
    })().catch(() => undefined);
    try {
      const jsm = await jetstreamManager(conn);
      await jsm.consumers.add(config.stream, {
        durable_name: config.consumer,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: nanos(ackWaitMs),
        max_ack_pending: config.concurrency,
        ...(config.filterSubject ? { filter_subject: config.filterSubject } : {}),
      });
      const consumer = await jetstream(conn).consumers.get(config.stream, config.consumer);
      const iter = await consumer.consume({ max_messages: config.concurrency });
      messages = iter;
      logger.info({ event: 'source_connected', stream: config.stream, consumer: config.consumer, ackWaitMs }, 'consuming');
      for await (const m of iter) {
        const work = handle(m);
        inFlight.add(work);
        void work.finally(() => inFlight.delete(work));
      }
    } finally {
      messages = undefined;
      await Promise.all([...inFlight]);
      connected = false;
      nc = undefined;
      await conn.close().catch(() => undefined);
    }
  };

  const loop = async (): Promise<void> => {
    let failures = 0;
    while (!stopped) {
      try {
        await session();
        failures = 0;
      } catch (err) {
        failures++;
        if (failures === 1 || failures % 20 === 0) logger.warn({ event: 'source_unreachable', err: { message: (err as Error).message } }, 'cannot consume from NATS; retrying');
      }
      if (stopped) break;
      await sleep(reconnectDelay(failures), deps.signal);
    }
  };

  return {
    name: config.name,
    start() {
      running = loop();
    },
    async stop() {
      stopped = true;
      // Ends the iteration; in-flight messages finish (acked) or are left for redelivery.
      messages?.stop();
      await running;
    },
    reachable: () => connected,
    async lag() {
      const conn = nc;
      if (!conn || !connected) return undefined;
      try {
        const info = await (await jetstreamManager(conn)).consumers.info(config.stream, config.consumer);
        return info.num_pending + info.num_ack_pending;
      } catch {
        return undefined;
      }
    },
  };
}

/** The connection's credentials, when the config has some (a token, or a user and password). */
function natsAuth(config: NatsSourceConfig): { token?: string; user?: string; pass?: string } {
  if (config.token !== undefined) return { token: config.token };
  if (config.user !== undefined) return { user: config.user, pass: config.password };
  return {};
}
