import { connect, type Channel, type ChannelModel, type ConsumeMessage } from 'amqplib';
import type { RabbitmqSourceConfig } from '@singleshot/config';
import { sha256Hex } from '@singleshot/core';
import { deriveEvent } from '../derive';
import { sleep } from '../hand-off';
import { reconnectDelay, type Source, type SourceDeps } from '../source';

/**
 * A RabbitMQ queue (docs/sources.md), consumed with manual acknowledgements
 * and a prefetch of `concurrency`. A message is acked only once its
 * acceptance resolved; one that can never be an event is recorded dead and
 * rejected without requeue (to the queue's dead-letter exchange when it has
 * one). When the connection drops, every unacked message goes back to the
 * queue and comes again as a duplicate arrival; the source reconnects with
 * backoff and resumes.
 */
export function rabbitmqSource(config: RabbitmqSourceConfig, deps: SourceDeps): Source {
  const logger = deps.logger.child({ source: config.name });
  let model: ChannelModel | undefined;
  let channel: Channel | undefined;
  let consumerTag: string | undefined;
  let stopped = false;
  let running: Promise<void> | undefined;
  const inFlight = new Set<Promise<void>>();

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

  const onMessage = (ch: Channel, msg: ConsumeMessage) => {
    const properties = msg.properties as unknown as Record<string, unknown>;
    const headers = (msg.properties.headers ?? {}) as Record<string, unknown>;
    const derived = deriveEvent(config, { body: msg.content, headers, properties });
    const messageId = typeof msg.properties.messageId === 'string' && msg.properties.messageId !== '' ? msg.properties.messageId : sha256Hex(msg.content);
    const work = deps.handOff
      .handle(config.name, derived, { key: `${config.queue}:${messageId}`, details: { type: 'rabbitmq', queue: config.queue, messageId }, body: msg.content.toString('utf8') }, { signal: deps.signal })
      .then(
        (outcome) => settle(ch, msg, outcome === 'invalid' ? 'reject' : 'ack'),
        // Stopping: left unacked, the broker requeues it when the channel closes.
        () => undefined,
      );
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  };

  /** Connects, consumes, and resolves once the connection is gone. */
  const session = async (): Promise<void> => {
    const m = await connect(config.url, { clientProperties: { connection_name: `singleshot-relay-${config.name}` } });
    model = m;
    const closed = new Promise<void>((resolve) => {
      m.on('close', () => resolve());
      m.on('error', () => undefined);
    });
    try {
      const ch = await m.createChannel();
      ch.on('error', () => undefined);
      ch.on('close', () => {
        if (channel === ch) channel = undefined;
        // A channel the broker closed (the queue deleted) ends the session: reconnect and declare again.
        if (!stopped) m.close().catch(() => undefined);
      });
      await ch.prefetch(config.concurrency);
      channel = ch;
      ({ consumerTag } = await ch.consume(config.queue, (msg) => {
        if (msg) onMessage(ch, msg);
        // A null message: the broker cancelled the consumer (queue deleted); the close above follows.
        else m.close().catch(() => undefined);
      }, { noAck: false }));
      logger.info({ event: 'source_connected', queue: config.queue }, 'consuming');
    } catch (err) {
      await m.close().catch(() => undefined);
      throw err;
    }
    await closed;
  };

  const loop = async (): Promise<void> => {
    let failures = 0;
    while (!stopped) {
      try {
        const startedAt = Date.now();
        await session();
        // A session that lasted is a fresh start for the backoff.
        failures = Date.now() - startedAt > 10_000 ? 0 : failures;
        if (!stopped) logger.warn({ event: 'source_unreachable' }, 'connection to RabbitMQ closed; reconnecting');
      } catch (err) {
        if (failures === 0 || failures % 20 === 0) logger.warn({ event: 'source_unreachable', err: { message: (err as Error).message } }, 'cannot consume from RabbitMQ; retrying');
      }
      channel = undefined;
      model = undefined;
      if (stopped) break;
      failures++;
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
      // Stop deliveries, let accepted messages be acked, then close (the rest is requeued).
      const ch = channel;
      if (ch && consumerTag) await ch.cancel(consumerTag).catch(() => undefined);
      await Promise.all([...inFlight]);
      await model?.close().catch(() => undefined);
      await running;
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
}
