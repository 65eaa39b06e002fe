import { sleep } from './hand-off';
import type { Source, SourceDeps } from './source';
import { openSession, type SourceSession } from './source-session';

/**
 * What is particular to one type of origin (sources/*.ts); the loop
 * (`sourceLoop`) does the rest. One connection is a session:
 * `connect` → `consume` → (the loop waits for the acceptances in flight) →
 * `disconnect`, and again with backoff until the source stops.
 */
export interface SourceAdapter {
  /** The source's name (`sources[].name`). */
  readonly name: string;
  /** The kind of origin, for people reading the log (`RabbitMQ`). */
  readonly origin: string;
  /**
   * Connects and subscribes, and resolves once messages can flow, with the
   * fields of the `source_connected` line. Rejects when the origin cannot be
   * reached or read (a missing queue, table or stream is unreachable too).
   */
  connect(session: SourceSession): Promise<Record<string, unknown>>;
  /**
   * Hands each message to `session.accept` until the connection ends:
   * resolves when it closed or the source is stopping (after `interrupt`),
   * rejects when it failed.
   */
  consume(session: SourceSession): Promise<void>;
  /** Makes a running `consume` end soon (cancel the subscription, wake the reader). Called once, by stop(), maybe while connecting. */
  interrupt(): Promise<void> | void;
  /** Closes the session's connection; after `consume`, or after a `connect` that failed. Never rejects. */
  disconnect(): Promise<void>;
  /** Once the loop ended: releases what outlives sessions (clients made once). */
  close?(): Promise<void>;
  /** True while the origin answers (readiness). */
  reachable(): boolean;
  /** Messages waiting at the origin, or undefined when it cannot be asked now. */
  lag(): Promise<number | undefined>;
  /** The same by partition (Source.partitionLag). */
  partitionLag?(): Promise<Record<string, number> | undefined>;
}

/** The loop's clock and waits; tests replace them. */
export interface LoopTiming {
  /** The wait before connection attempt `failures + 1`; default `reconnectDelay`. */
  delay(failures: number): number;
  /** A connection that held this long is a fresh start for the backoff. */
  heldMs: number;
  now(): number;
  /** Resolves after `ms`, or at once when `signal` aborts. */
  wait(ms: number, signal: AbortSignal): Promise<void>;
}

/** Waits between reconnections: doubling from 100 ms up to 5 s. */
export function reconnectDelay(failures: number): number {
  return Math.min(5_000, 100 * 2 ** Math.min(failures, 6));
}

const DEFAULT_TIMING: LoopTiming = { delay: reconnectDelay, heldMs: 10_000, now: Date.now, wait: sleep };

/** The first failure of a run, and every 20th after it, are logged. */
const notable = (failures: number) => failures === 1 || failures % 20 === 0;

/**
 * The one source loop: connects, logs `source_connected`, consumes; when the
 * connection fails or ends it waits for the acceptances in flight (those
 * still waiting for Redis give up, unacknowledged), disconnects, logs
 * `source_unreachable` and reconnects after a doubling, capped wait, reset by
 * a connection that held. A failed connection attempt is logged on the first
 * failure and every 20th; a connection lost after it was up always. `stop()`
 * ends consumption, lets the acceptances in flight settle, disconnects.
 */
export function sourceLoop(adapter: SourceAdapter, deps: SourceDeps, timing: Partial<LoopTiming> = {}): Source {
  const { delay, heldMs, now, wait } = { ...DEFAULT_TIMING, ...timing };
  const logger = deps.logger.child({ source: adapter.name });
  const stopped = new AbortController();
  const waitSignal = AbortSignal.any([deps.signal, stopped.signal]);
  const stopping = () => stopped.signal.aborted;
  let running: Promise<void> | undefined;

  /** One connection; resolves with when it was up (if it was) and how it ended. */
  const session = async (): Promise<{ upAt?: number; err?: unknown }> => {
    const s = openSession(deps.handOff, adapter.name, deps.signal, stopping);
    let upAt: number | undefined;
    try {
      const fields = await adapter.connect(s);
      if (stopping()) return {};
      upAt = now();
      logger.info({ event: 'source_connected', ...fields }, 'consuming');
      await adapter.consume(s);
      return { upAt };
    } catch (err) {
      return { ...(upAt !== undefined ? { upAt } : {}), err };
    } finally {
      await s.drain();
      await adapter.disconnect();
    }
  };

  const loop = async (): Promise<void> => {
    let failures = 0;
    while (!stopping()) {
      const { upAt, err } = await session();
      if (stopping()) break;
      failures = upAt !== undefined && now() - upAt >= heldMs ? 1 : failures + 1;
      if (upAt !== undefined || notable(failures)) {
        const message = upAt !== undefined ? `lost the connection to ${adapter.origin}; reconnecting` : `cannot consume from ${adapter.origin}; retrying`;
        logger.warn({ event: 'source_unreachable', failures, ...(err !== undefined ? { err: errorFields(err) } : {}) }, message);
      }
      await wait(delay(failures), waitSignal);
    }
    await adapter.close?.();
  };

  return {
    name: adapter.name,
    start() {
      running ??= loop();
    },
    async stop() {
      stopped.abort();
      await adapter.interrupt();
      // Never started: nothing ran that would close what the adapter holds.
      await (running ?? adapter.close?.());
    },
    reachable: () => adapter.reachable(),
    lag: () => adapter.lag(),
    ...(adapter.partitionLag ? { partitionLag: adapter.partitionLag } : {}),
  };
}

/** An error as log fields: its message, and its `code` when it has one (never classified by the text). */
export function errorFields(err: unknown): { message: string; code?: string } {
  if (!(err instanceof Error)) return { message: String(err) };
  const { code } = err as { code?: unknown };
  return { message: err.message, ...(typeof code === 'string' ? { code } : {}) };
}
