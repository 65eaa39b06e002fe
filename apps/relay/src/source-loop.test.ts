import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { SingleshotError, externalCode } from '@singleshot/core';
import { createLogger } from '@singleshot/observability';
import type { Derived } from './derive';
import { HandOff, type Outcome } from './hand-off';
import { relayMetrics } from './metrics';
import { reconnectDelay, sourceLoop, type SourceAdapter } from './source-loop';
import type { SourceSession } from './source-session';

// The loop is pure logic over its adapter, so a scripted adapter stands in
// for a broker here; each real adapter runs against its real broker in
// test/e2e/sources-*.test.ts.

/** One connection of the scripted adapter: how connect ends, then what consume does. */
interface Step {
  connect: 'ok' | Error;
  consume?: (session: SourceSession, until: Promise<void>) => Promise<void>;
  /** Clock advance while consuming (a connection that held). */
  holdMs?: number;
}

const EVENT: Derived = { ok: true, event: { id: 'e-1', source: 'shop', type: 'order.created', data: {} } };
const ORIGIN = { key: 'q:1', details: { type: 'fake' }, body: '{}' };

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** The loop over a scripted adapter; once the script is done, connect waits for stop(). */
function scripted(steps: Step[], accept: () => Promise<'accepted'> = async () => 'accepted') {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({ app: 'test', destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
  const handOff = new HandOff({
    accept: async () => ({ status: await accept() }) as never,
    addDead: async () => undefined,
    metrics: relayMetrics(new Registry(), async () => []),
    logger,
    backoff: { minMs: 1, maxMs: 1 },
  });
  const order: string[] = [];
  const waits: number[] = [];
  let clock = 0;
  const interrupted = deferred();
  const idle = deferred();
  let step = 0;
  let current: Step | undefined;
  const adapter: SourceAdapter = {
    name: 'fake',
    origin: 'Fake',
    async connect() {
      current = steps[step++];
      order.push('connect');
      if (!current) {
        idle.resolve();
        await interrupted.promise;
        throw new Error('stopped');
      }
      if (current.connect !== 'ok') throw current.connect;
      return { queue: 'q' };
    },
    async consume(session) {
      clock += current?.holdMs ?? 0;
      await current?.consume?.(session, interrupted.promise);
    },
    interrupt: () => interrupted.resolve(),
    async disconnect() {
      order.push('disconnect');
    },
    reachable: () => true,
    lag: async () => 0,
  };
  const relay = new AbortController();
  const source = sourceLoop(
    adapter,
    { handOff, logger, metrics: relayMetrics(new Registry(), async () => []), acceptanceDeadlineMs: 1_000, signal: relay.signal },
    { now: () => clock, heldMs: 10_000, wait: async (ms) => void waits.push(ms) },
  );
  const events = (name: string) => lines.filter((l) => l.event === name);
  return { source, order, waits, idle: idle.promise, events, relay };
}

const flush = () => new Promise((r) => setImmediate(r));

describe('sourceLoop', () => {
  it('retries a failed connection with doubling waits up to the cap, logging the first failure and every 20th', async () => {
    const down = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const t = scripted([...Array.from({ length: 21 }, () => ({ connect: down })), { connect: 'ok', consume: (_, until) => until }]);
    t.source.start();
    while (t.events('source_connected').length === 0) await flush();
    expect(t.waits).toEqual(Array.from({ length: 21 }, (_, i) => reconnectDelay(i + 1)));
    expect(t.waits.at(-1)).toBe(5_000);
    expect(t.events('source_unreachable')).toMatchObject([
      { failures: 1, err: { message: 'connect ECONNREFUSED', code: 'ECONNREFUSED' } },
      { failures: 20, err: { message: 'connect ECONNREFUSED', code: 'ECONNREFUSED' } },
    ]);
    expect(t.events('source_connected')).toMatchObject([{ source: 'fake', queue: 'q' }]);
    await t.source.stop();
  });

  it('reconnects after a lost connection, always logging it; a connection that held resets the backoff', async () => {
    const fail = new Error('unreachable');
    const t = scripted([{ connect: fail }, { connect: fail }, { connect: fail }, { connect: 'ok', holdMs: 10_000 }, { connect: 'ok' }, { connect: 'ok' }]);
    t.source.start();
    await t.idle;
    // Three failures, a connection that held (back to the first wait), then two that did not.
    expect(t.waits).toEqual([1, 2, 3, 1, 2, 3].map(reconnectDelay));
    expect(t.events('source_connected')).toHaveLength(3);
    expect(t.events('source_unreachable').map((l) => [l.failures, l.err === undefined])).toEqual([
      [1, false],
      [1, true],
      [2, true],
      [3, true],
    ]);
    await t.source.stop();
  });

  it('a consume that fails ends the connection: logged with its error code, disconnected, connected again', async () => {
    const broken = new SingleshotError('the channel closed', externalCode('CHANNEL_CLOSED'));
    const t = scripted([{ connect: 'ok', consume: async () => Promise.reject(broken) }, { connect: 'ok' }]);
    t.source.start();
    await t.idle;
    expect(t.events('source_unreachable')).toMatchObject([{ failures: 1, err: { code: 'CHANNEL_CLOSED', message: 'the channel closed' } }, { failures: 2 }]);
    expect(t.order).toEqual(['connect', 'disconnect', 'connect', 'disconnect', 'connect']);
    await t.source.stop();
  });

  it('stop() while consuming ends consumption, lets the acceptance in flight settle, then disconnects', async () => {
    const acceptance = deferred<'accepted'>();
    const settled: Outcome[] = [];
    let accepted: Promise<boolean> | undefined;
    const t = scripted(
      [
        {
          connect: 'ok',
          consume: async (session, until) => {
            accepted = session.accept(EVENT, ORIGIN, (outcome) => {
              settled.push(outcome);
              t.order.push('settle');
            });
            await until;
          },
        },
      ],
      () => acceptance.promise,
    );
    t.source.start();
    while (!accepted) await flush();
    let stopped = false;
    const stopping = t.source.stop().then(() => (stopped = true));
    await flush();
    expect(stopped).toBe(false);
    expect(t.order).toEqual(['connect']);
    acceptance.resolve('accepted');
    await stopping;
    expect(await accepted).toBe(true);
    expect(settled).toEqual(['accepted']);
    expect(t.order).toEqual(['connect', 'settle', 'disconnect']);
    expect(t.events('source_unreachable')).toEqual([]);
  });

  it('a connection lost while an acceptance waits for Redis gives the acceptance up unsettled before reconnecting', async () => {
    let accepted: Promise<boolean> | undefined;
    const settle = () => void t.order.push('settle');
    const t = scripted(
      [
        {
          connect: 'ok',
          consume: async (session) => {
            accepted = session.accept(EVENT, ORIGIN, settle);
            // The connection closes at once; the acceptance keeps failing (Redis away).
          },
        },
        { connect: 'ok' },
      ],
      () => Promise.reject(new Error('Redis is away')),
    );
    t.source.start();
    await t.idle;
    expect(await accepted).toBe(false);
    expect(t.order).toEqual(['connect', 'disconnect', 'connect', 'disconnect', 'connect']);
    await t.source.stop();
  });

  it('stop() while connecting ends the loop without consuming', async () => {
    const t = scripted([]);
    t.source.start();
    await t.idle;
    await t.source.stop();
    expect(t.order).toEqual(['connect', 'disconnect']);
    expect(t.events('source_unreachable')).toEqual([]);
    expect(t.events('source_connected')).toEqual([]);
  });
});
