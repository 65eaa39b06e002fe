import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import type { NatsSourceConfig } from '@singleshot/config';
import { deriveEvent } from '../derive';
import type { Source, SourceDeps } from '../source';
import { sourceLoop, type SourceAdapter } from '../source-loop';
import type { SourceSession } from '../source-session';

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
 * reconnects by itself after a server restart and the consumer resumes; the
 * source loop (source-loop.ts) starts a new connection when it cannot.
 */
export function natsSource(config: NatsSourceConfig, deps: SourceDeps): Source {
  const ackWaitMs = natsAckWaitMs(config, deps.acceptanceDeadlineMs);
  let nc: NatsConnection | undefined;
  let messages: ConsumerMessages | undefined;
  let connected = false;

  const handle = (session: SourceSession, m: JsMsg): void => {
    const headers: Record<string, unknown> = {};
    for (const key of m.headers?.keys() ?? []) headers[key] = m.headers?.get(key);
    const msgId = m.headers?.get('Nats-Msg-Id');
    const derived = deriveEvent(config, { body: Buffer.from(m.data), headers, ...(msgId ? { fallbackId: msgId } : {}) });
    // In-progress acks while the acceptance runs: the ack wait restarts each time.
    const keepAlive = setInterval(() => m.working(), Math.max(1_000, Math.floor(ackWaitMs / 3)));
    // Not settled (stopping): left unacknowledged, redelivered after the ack wait.
    void session
      .accept(
        derived,
        { key: `${config.stream}:${m.seq}`, details: { type: 'nats', stream: config.stream, seq: m.seq, subject: m.subject }, body: Buffer.from(m.data).toString('utf8') },
        // No reason text: servers before 2.10.4 do not take one and would leave the message unacknowledged.
        // ackAck waits for the server's confirmation; if it is lost the message comes again, a duplicate arrival.
        (outcome) => (outcome === 'invalid' ? m.term() : m.ackAck().catch(() => false)),
        { onWait: () => m.working() },
      )
      .finally(() => clearInterval(keepAlive));
  };

  const adapter: SourceAdapter = {
    name: config.name,
    origin: 'NATS',
    async connect() {
      const conn = await connect({ servers: config.servers, name: `singleshot-relay-${config.name}`, maxReconnectAttempts: -1, reconnectTimeWait: 500, ...natsAuth(config) });
      nc = conn;
      connected = true;
      void (async () => {
        for await (const s of conn.status()) {
          if (s.type === 'disconnect') connected = false;
          else if (s.type === 'reconnect') connected = true;
        }
      })().catch(() => undefined);
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
      messages = await consumer.consume({ max_messages: config.concurrency });
      return { stream: config.stream, consumer: config.consumer, ackWaitMs };
    },
    async consume(session) {
      const iter = messages;
      // The client reconnects by itself after a server restart, and the iteration goes on.
      if (iter) for await (const m of iter) handle(session, m);
    },
    // Ends the iteration; in-flight messages finish (acked) or are left for redelivery.
    interrupt: () => messages?.stop(),
    async disconnect() {
      const conn = nc;
      messages = undefined;
      connected = false;
      nc = undefined;
      await conn?.close().catch(() => undefined);
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
  return sourceLoop(adapter, deps);
}

/** The connection's credentials, when the config has some (a token, or a user and password). */
function natsAuth(config: NatsSourceConfig): { token?: string; user?: string; pass?: string } {
  if (config.token !== undefined) return { token: config.token };
  if (config.user !== undefined) return { user: config.user, pass: config.password };
  return {};
}
