import type { Logger } from '@singleshot/observability';
import type { HandOff } from './hand-off';
import type { RelayMetrics } from './metrics';

/**
 * One origin of events (an outbox table, a queue, a stream). A source reads a
 * message, derives its event (derive.ts), hands it to `HandOff` and
 * acknowledges it to its origin only once that resolved; a message it read
 * but did not acknowledge comes back after a crash as an ordinary duplicate
 * arrival. Each type is an adapter in its own file under sources/, run by
 * the one loop of source-loop.ts (connect, consume, backoff, stop); SQS would
 * be one more file.
 */
export interface Source {
  readonly name: string;
  /** Connects and consumes until `stop()`; an unreachable origin is retried with backoff, never thrown. */
  start(): void;
  /** Stops reading, lets messages in acceptance finish (or leaves them unacknowledged), disconnects. */
  stop(): Promise<void>;
  /** True while the origin answers (readiness). */
  reachable(): boolean;
  /** Messages waiting at the origin, or undefined when it cannot be asked now. */
  lag(): Promise<number | undefined>;
  /** The same by partition (`"0"`, `"1"`, …), for an origin that has partitions; the metric then has one sample per partition. */
  partitionLag?(): Promise<Record<string, number> | undefined>;
}

/** What every source gets from the relay. */
export interface SourceDeps {
  handOff: HandOff;
  logger: Logger;
  /** The relay's metrics, for what a source counts besides messages (rebalances). */
  metrics: RelayMetrics;
  /** How long one acceptance may take before it fails (ingest.enqueueTimeoutMs). */
  acceptanceDeadlineMs: number;
  /** Aborted when the relay stops; a hand-off waiting for Redis then gives up without acknowledging. */
  signal: AbortSignal;
}
