import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { cachedSource, type SourceOptions, type SourceResult } from './cached-source';

export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;
export type QueueState = (typeof QUEUE_STATES)[number];

/** Label values, for callers and dashboards (docs/contract.md "Metrics"). */
export const EVENT_RESULTS = ['accepted', 'duplicate', 'invalid'] as const;
export const DUPLICATE_STAGES = ['ingest', 'decision', 'delivery'] as const;
export const DELIVERY_RESULTS = ['sent', 'retry', 'in_doubt', 'dead', 'suppressed'] as const;
/** `result` of singleshot_feedback_events_total. */
export const FEEDBACK_RESULTS = ['recorded', 'duplicate', 'unmatched', 'ignored', 'refused'] as const;
export const RECONCILIATION_OUTCOMES = ['found', 'not_found', 'unsupported', 'error'] as const;

export interface QueueCounts {
  queue: string;
  counts: Record<QueueState, number>;
}

export interface DlqDepth {
  queue: string;
  depth: number;
}

/** 1 ms … 60 s: a Redis round trip up to a slow SMTP relay. */
export const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * End to end includes retries, and retry backoff is capped at 10 minutes by
 * default, so this one goes further than the per-call buckets.
 */
export const END_TO_END_BUCKETS = [...DURATION_BUCKETS, 120, 300, 600, 1800];

/** Every metric of singleshot, typed by its labels. */
export interface Metrics {
  registry: Registry;
  eventsReceived: Counter<'source' | 'result'>;
  duplicatesSuppressed: Counter<'stage' | 'reason'>;
  lockConflicts: Counter<'queue'>;
  deliveries: Counter<'channel' | 'provider' | 'result'>;
  deliveryDuration: Histogram<'channel' | 'provider'>;
  /** First arrival of the message to provider acceptance. */
  endToEnd: Histogram<'channel'>;
  /** A holder tried to commit with a superseded fence (it lost its lease). */
  staleCommits: Counter<'queue'>;
  inDoubt: Counter<'channel' | 'provider'>;
  reconciliations: Counter<'provider' | 'outcome'>;
  /** Mails keyed by the fallback fingerprint (no usable Message-ID): collisions are possible. */
  fingerprintFallbacks: Counter<'source'>;
  ingestRequestDuration: Histogram<'route' | 'status'>;
  /** Ingest requests by producer key name (`anonymous`, `hmac`, `none` before authentication) and status code. */
  ingestRequests: Counter<'key' | 'status'>;
  dead: Counter<'channel' | 'reason'>;
  suppressed: Counter<'reason'>;
  /** A channel moved on to its next provider (only after a definite failure). */
  fallbackSwitches: Counter<'channel' | 'from' | 'to'>;
  /** Circuit breaker per provider: 0 closed, 1 half-open, 2 open. */
  breakerState: Gauge<'channel' | 'provider'>;
  /** Seconds since the last successful poll of a mailbox. */
  imapPollLag: Gauge<'mailbox'>;
  /**
   * 1 while this process's worker of a queue partition consumes it, 0 while it
   * is stuck or its queue does not answer; summed over processes, a partition
   * at 0 has no consumer anywhere.
   */
  partitionConsumers: Gauge<'queue' | 'partition'>;
  /** A stuck partition worker was replaced by a new one. */
  partitionConsumerRestarts: Counter<'queue' | 'partition'>;
  /** Dead or suppressed operations replayed, by who asked (cli, api, dashboard). */
  replays: Counter<'via' | 'result'>;
  /**
   * Provider feedback events by the operation's provider (the endpoint's name
   * when no operation matched), feedback type and result (recorded, duplicate,
   * unmatched, ignored, refused).
   */
  feedbackEvents: Counter<'provider' | 'type' | 'result'>;
  /** Messages that made no operation (no route matched, or no recipients). */
  unrouted: Counter<'reason'>;
  /** Operations currently in doubt, read at scrape time from the source given to setInDoubtSource. */
  operationsInDoubt: Gauge<string>;
  /** What cancels did, per operation (`cancelled`, `in_flight`, `already_sent`, …), and `pending` per cancel that waits for operations to come. */
  cancellations: Counter<'outcome'>;
  /**
   * Suppressions added (a recipient no operation of a channel is sent to any
   * more), by reason: `hard_bounce`, `complaint`, `unsubscribe` from provider
   * feedback, `operator` from the admin API (the operator's own words stay in
   * the audit: free text would make the label unbounded). A repeat of one that
   * exists is not counted.
   */
  suppressionsAdded: Counter<'reason'>;
  /** Operations scheduled for later (send-at, a route's delay), read at scrape time from the source given to setScheduledSource. */
  operationsScheduled: Gauge<string>;
  /** Where `singleshot_operations_scheduled` comes from; cached like the others. */
  setScheduledSource(fetch: () => Promise<number>, options?: SourceOptions): void;
  /** Filled at scrape time from the source given to setQueueSource. */
  queueJobs: Gauge<'queue' | 'state'>;
  /** Filled at scrape time from the source given to setDlqSource. */
  dlqDepth: Gauge<'queue'>;
  /** Where `singleshot_queue_jobs` comes from; called at most once per `cacheMs` (2 s). Replaces any earlier source. */
  setQueueSource(fetch: () => Promise<QueueCounts[]>, options?: SourceOptions): void;
  /** Where `singleshot_dlq_depth` comes from; called at most once per `cacheMs` (2 s). Replaces any earlier source. */
  setDlqSource(fetch: () => Promise<DlqDepth[]>, options?: SourceOptions): void;
  /** Where `singleshot_operations_in_doubt` comes from; cached like the others. */
  setInDoubtSource(fetch: () => Promise<number>, options?: SourceOptions): void;
  /** Operations this process holds back without a claim, by reason (`breaker_open`), read at scrape time. */
  operationsWaiting: Gauge<'reason'>;
  /** Where `singleshot_operations_waiting` comes from (in memory, no I/O). */
  setWaitingSource(read: () => Record<string, number>): void;
  /**
   * Waiting counts kept in Redis (operations waiting for a document), added to
   * the in-memory ones; read at scrape time and cached like the queue counts.
   */
  setStoredWaitingSource(fetch: () => Promise<Record<string, number>>, options?: SourceOptions): void;
  /** How long this process waits before its next try while Redis refuses commands (0 when it does not). */
  redisBackoff: Gauge<string>;
  /** Where `singleshot_redis_backoff_seconds` comes from (in memory, no I/O). */
  setRedisBackoffSource(read: () => number): void;
  /** 1 once this process met a Redis layout newer than its code and stopped taking work. */
  layoutUpgradeRequired: Gauge<string>;
  /** Where `singleshot_layout_upgrade_required` comes from (in memory, no I/O). */
  setLayoutSource(read: () => boolean): void;
}

// One Metrics per registry: in the embedded mode several apps share a process,
// and registering a metric name twice in one registry throws.
const byRegistry = new WeakMap<Registry, Metrics>();

/**
 * The metrics of docs/contract.md plus singleshot's own, registered in `registry`
 * together with the standard process metrics (`process_*`, `nodejs_*`).
 * Calling it again with the same registry returns the same object.
 */
export function createMetrics(registry: Registry = new Registry()): Metrics {
  const existing = byRegistry.get(registry);
  if (existing) return existing;

  // The registry may already carry the defaults (e.g. prom-client's global one).
  if (!registry.getSingleMetric('process_cpu_user_seconds_total')) collectDefaultMetrics({ register: registry });

  const registers = [registry];
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L> =>
    new Counter<L>({ name, help, labelNames, registers });
  const histogram = <L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]): Histogram<L> =>
    new Histogram<L>({ name, help, labelNames, buckets, registers });

  let queueSource: (() => Promise<SourceResult<QueueCounts[]>>) | undefined;
  let dlqSource: (() => Promise<SourceResult<DlqDepth[]>>) | undefined;
  let inDoubtSource: (() => Promise<SourceResult<number>>) | undefined;

  const operationsInDoubt = new Gauge({
    name: 'singleshot_operations_in_doubt',
    help: 'Operations currently in doubt (provider may have accepted; awaiting reconciliation), read at scrape time.',
    registers,
    async collect() {
      if (!inDoubtSource) return;
      const result = await inDoubtSource();
      this.reset();
      if (result.ok) this.set(result.value);
    },
  });

  let scheduledSource: (() => Promise<SourceResult<number>>) | undefined;
  const operationsScheduled = new Gauge({
    name: 'singleshot_operations_scheduled',
    help: 'Operations created ahead of their send-at time and not yet attempted, read at scrape time.',
    registers,
    async collect() {
      if (!scheduledSource) return;
      const result = await scheduledSource();
      this.reset();
      if (result.ok) this.set(result.value);
    },
  });

  const queueJobs = new Gauge<'queue' | 'state'>({
    name: 'singleshot_queue_jobs',
    help: 'Jobs per queue and state, read from Redis at scrape time (cached 2 s).',
    labelNames: ['queue', 'state'],
    registers,
    async collect() {
      if (!queueSource) return;
      const result = await queueSource();
      // A failed read empties the gauge: no series beats a stale depth that looks healthy.
      this.reset();
      if (!result.ok) return;
      for (const { queue, counts } of result.value) {
        for (const state of QUEUE_STATES) this.set({ queue, state }, counts[state] ?? 0);
      }
    },
  });

  const dlqDepth = new Gauge<'queue'>({
    name: 'singleshot_dlq_depth',
    help: 'Dead operations waiting in each dead-letter queue, read at scrape time (cached 2 s).',
    labelNames: ['queue'],
    registers,
    async collect() {
      if (!dlqSource) return;
      const result = await dlqSource();
      this.reset();
      if (!result.ok) return;
      for (const { queue, depth } of result.value) this.set({ queue }, depth);
    },
  });

  let waitingSource: (() => Record<string, number>) | undefined;
  let storedWaitingSource: (() => Promise<SourceResult<Record<string, number>>>) | undefined;
  const operationsWaiting = new Gauge<'reason'>({
    name: 'singleshot_operations_waiting',
    help: 'Operations held back without a claim (not an attempt), by reason: breaker_open in this delivery process, document from Redis; read at scrape time.',
    labelNames: ['reason'],
    registers,
    async collect() {
      if (!waitingSource && !storedWaitingSource) return;
      const counts: Record<string, number> = { ...(waitingSource?.() ?? {}) };
      const stored = storedWaitingSource ? await storedWaitingSource() : undefined;
      if (stored?.ok) for (const [reason, n] of Object.entries(stored.value)) counts[reason] = (counts[reason] ?? 0) + n;
      this.reset();
      for (const [reason, n] of Object.entries(counts)) this.set({ reason }, n);
    },
  });

  let redisBackoffSource: (() => number) | undefined;
  const redisBackoff = new Gauge({
    name: 'singleshot_redis_backoff_seconds',
    help: 'Current wait before the next try while Redis refuses commands (OOM, MISCONF, READONLY, ...); 0 when it does not. /readyz names the refusal.',
    registers,
    collect() {
      this.set(redisBackoffSource?.() ?? 0);
    },
  });

  let layoutSource: (() => boolean) | undefined;
  const layoutUpgradeRequired = new Gauge({
    name: 'singleshot_layout_upgrade_required',
    help: '1 once this process met a Redis layout newer than its code: it takes no more work and /readyz answers 503 until it is replaced by a newer version.',
    registers,
    collect() {
      this.set(layoutSource?.() ? 1 : 0);
    },
  });

  const metrics: Metrics = {
    registry,
    redisBackoff,
    setRedisBackoffSource(read) {
      redisBackoffSource = read;
    },
    layoutUpgradeRequired,
    setLayoutSource(read) {
      layoutSource = read;
    },
    operationsWaiting,
    setWaitingSource(read) {
      waitingSource = read;
    },
    setStoredWaitingSource(fetch, options) {
      storedWaitingSource = cachedSource(fetch, options);
    },
    eventsReceived: counter('singleshot_events_received_total', 'Events and mails received, by source and result.', [
      'source',
      'result',
    ]),
    duplicatesSuppressed: counter(
      'singleshot_duplicates_suppressed_total',
      'Arrivals or attempts recognized as duplicates, by stage and reason.',
      ['stage', 'reason'],
    ),
    lockConflicts: counter('singleshot_lock_conflicts_total', 'Claims that found the operation locked by another holder.', [
      'queue',
    ]),
    deliveries: counter('singleshot_deliveries_total', 'Delivery attempts by outcome.', ['channel', 'provider', 'result']),
    deliveryDuration: histogram(
      'singleshot_delivery_duration_seconds',
      'Duration of one provider call.',
      ['channel', 'provider'],
      DURATION_BUCKETS,
    ),
    endToEnd: histogram(
      'singleshot_end_to_end_seconds',
      'First arrival of a message to provider acceptance of its notification.',
      ['channel'],
      END_TO_END_BUCKETS,
    ),
    staleCommits: counter('singleshot_stale_commits_total', 'Commits rejected because the fence token was superseded.', [
      'queue',
    ]),
    inDoubt: counter('singleshot_in_doubt_total', 'Provider calls whose outcome is unknown (timeout or reset after writing).', [
      'channel',
      'provider',
    ]),
    reconciliations: counter('singleshot_reconciliations_total', 'Reconciliations of in-doubt operations, by outcome.', [
      'provider',
      'outcome',
    ]),
    fingerprintFallbacks: counter(
      'singleshot_fingerprint_fallbacks_total',
      'Mails identified by the fallback fingerprint because they had no usable Message-ID.',
      ['source'],
    ),
    ingestRequestDuration: histogram(
      'singleshot_ingest_request_duration_seconds',
      'Duration of ingest HTTP requests, by route and status code.',
      ['route', 'status'],
      DURATION_BUCKETS,
    ),
    ingestRequests: counter('singleshot_ingest_requests_total', 'Ingest API requests by producer key name and status code.', ['key', 'status']),
    dead: counter('singleshot_dead_total', 'Operations moved to the dead-letter queue, by reason.', ['channel', 'reason']),
    suppressed: counter('singleshot_suppressed_total', 'Operations suppressed on purpose (rate limit, rule).', ['reason']),
    fallbackSwitches: counter('singleshot_fallback_switches_total', 'A channel moved on to its next provider after a definite failure.', [
      'channel',
      'from',
      'to',
    ]),
    breakerState: new Gauge<'channel' | 'provider'>({
      name: 'singleshot_provider_breaker_state',
      help: 'Circuit breaker state per provider: 0 closed, 1 half-open, 2 open.',
      labelNames: ['channel', 'provider'],
      registers,
    }),
    imapPollLag: new Gauge<'mailbox'>({
      name: 'singleshot_imap_poll_lag_seconds',
      help: 'Seconds since the last successful poll of a mailbox.',
      labelNames: ['mailbox'],
      registers,
    }),
    partitionConsumers: new Gauge<'queue' | 'partition'>({
      name: 'singleshot_partition_consumers',
      help: 'Working consumers of a queue partition in this process: 1 consuming, 0 stuck or unreachable.',
      labelNames: ['queue', 'partition'],
      registers,
    }),
    partitionConsumerRestarts: counter('singleshot_partition_consumer_restarts_total', 'Stuck queue partition workers replaced by a new worker.', ['queue', 'partition']),
    replays: counter('singleshot_replays_total', 'Dead or suppressed operations replayed, by who asked and result.', ['via', 'result']),
    feedbackEvents: counter('singleshot_feedback_events_total', 'Provider delivery feedback events (delivered, bounced, complained, …), by provider, type and result.', [
      'provider',
      'type',
      'result',
    ]),
    unrouted: counter('singleshot_unrouted_total', 'Messages that made no operation, by reason.', ['reason']),
    operationsInDoubt,
    suppressionsAdded: counter('singleshot_suppressions_total', 'Suppressions added (from provider feedback or an operator), by reason.', ['reason']),
    cancellations: counter('singleshot_cancellations_total', 'What cancels did, per operation, and `pending` per cancel that waits for operations still to come.', ['outcome']),
    operationsScheduled,
    setScheduledSource(fetch, options) {
      scheduledSource = cachedSource(fetch, options);
    },
    queueJobs,
    dlqDepth,
    setInDoubtSource(fetch, options) {
      inDoubtSource = cachedSource(fetch, options);
    },
    setQueueSource(fetch, options) {
      queueSource = cachedSource(fetch, options);
    },
    setDlqSource(fetch, options) {
      dlqSource = cachedSource(fetch, options);
    },
  };
  byRegistry.set(registry, metrics);
  return metrics;
}
