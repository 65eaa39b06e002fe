import { connect, type Channel, type ChannelModel, type ConsumeMessage } from 'amqplib';
import type { RabbitmqSourceConfig } from '@singleshot/config';
import { sha256Hex } from '@singleshot/core';
import { deriveEvent } from '../derive';
import type { Source, SourceDeps } from '../source';
import { sourceLoop, type SourceAdapter } from '../source-loop';
import type { SourceSession } from '../source-session';

/**
 * A RabbitMQ queue (docs/sources.md), consumed with manual acknowledgements
 * and a prefetch of `concurrency`. A message is acked only once its
 * acceptance resolved; one that can never be an event is recorded dead and
 * rejected without requeue (to the queue's dead-letter exchange when it has
 * one). When the connection drops, every unacked message goes back to the
 * queue and comes again as a duplicate arrival; the source loop
 * (source-loop.ts) reconnects with backoff and resumes.
 */
export function rabbitmqSource(config: RabbitmqSourceConfig, deps: SourceDeps): Source {
  let model: ChannelModel | undefined;
  let channel: Channel | undefined;
  let consumerTag: string | undefined;
  /** Resolves once the connection closed, or the source stops consuming. */
  let ended: Promise<void> = Promise.resolve();
  let end: () => void = () => undefined;

  const settle = (ch: Channel, msg: ConsumeMessage, how: 'ack' | 'reject') => {
    // On a channel that closed meanwhile there is nothing to settle: the broker requeued the message.
    if (ch !== channel) return;
    try {
      if (how === 'ack') ch.ack(msg);
      else ch.nack(msg, false, false);
    } catch {
      // The channel closed between the check and the call; the same holds.
    }
  };

  const onMessage = (session: SourceSession, ch: Channel, msg: ConsumeMessage) => {
    const properties = msg.properties as unknown as Record<string, unknown>;
    const headers = (msg.properties.headers ?? {}) as Record<string, unknown>;
    const derived = deriveEvent(config, { body: msg.content, headers, properties });
    const messageId = typeof msg.properties.messageId === 'string' && msg.properties.messageId !== '' ? msg.properties.messageId : sha256Hex(msg.content);
    // Not settled (stopping, or the connection lost): left unacked, the broker requeues it when the channel closes.
    void session.accept(derived, { key: `${config.queue}:${messageId}`, details: { type: 'rabbitmq', queue: config.queue, messageId }, body: msg.content.toString('utf8') }, (outcome) =>
      settle(ch, msg, outcome === 'invalid' ? 'reject' : 'ack'),
    );
  };

  const adapter: SourceAdapter = {
    name: config.name,
    origin: 'RabbitMQ',
    async connect(session) {
      const m = await connect(config.url, { clientProperties: { connection_name: `singleshot-relay-${config.name}` } });
      model = m;
      ended = new Promise<void>((resolve) => {
        end = resolve;
        m.on('close', () => resolve());
        m.on('error', () => undefined);
      });
      const ch = await m.createChannel();
      ch.on('error', () => undefined);
      ch.on('close', () => {
        if (channel === ch) channel = undefined;
        // A channel the broker closed (the queue deleted) ends the connection: reconnect and declare again.
        if (!session.stopping) m.close().catch(() => undefined);
      });
      await ch.prefetch(config.concurrency);
      channel = ch;
      ({ consumerTag } = await ch.consume(config.queue, (msg) => {
        if (msg) onMessage(session, ch, msg);
        // A null message: the broker cancelled the consumer (queue deleted); the close above follows.
        else m.close().catch(() => undefined);
      }, { noAck: false }));
      return { queue: config.queue };
    },
    consume: () => ended,
    async interrupt() {
      // Stop deliveries; the loop lets accepted messages be acked, then closes (the rest is requeued).
      const ch = channel;
      if (ch && consumerTag) await ch.cancel(consumerTag).catch(() => undefined);
      end();
    },
    async disconnect() {
      channel = undefined;
      consumerTag = undefined;
      await model?.close().catch(() => undefined);
      model = undefined;
    },
    reachable: () => channel !== undefined,
    async lag() {
      const m = model;
      if (!m) return undefined;
      let ch: Channel | undefined;
      try {
        // Its own channel: a failed check closes the channel it runs on.
        ch = await m.createChannel();
        ch.on('error', () => undefined);
        return (await ch.checkQueue(config.queue)).messageCount;
      } catch {
        return undefined;
      } finally {
        await ch?.close().catch(() => undefined);
      }
    },
  };
  return sourceLoop(adapter, deps);
}
