/** Queue names. BullMQ's prefix comes from KeyBuilder.queuePrefix. */
export const QUEUES = {
  /**
   * Classify, route, fan out: a `decide` job per message (jobId = message key), or a
   * `batch` job carrying the messages ingest accepted in one turn (batch-jobs.ts).
   */
  decide: 'decide',
  /**
   * Claim, send, commit: a `deliver` job per operation (jobId = operation key), or a
   * `batch` job carrying several operations, of one message or several (batch-jobs.ts).
   */
  deliver: 'deliver',
  /** One job per document (jobId = document key): generate, store, wake the waiting deliveries. */
  render: 'render',
  /**
   * Digest closes: one delayed job per digest (jobId = digest id) that runs at
   * its close time, closes it and enqueues its flush operation (docs/digests.md).
   */
  digest: 'digest',
  /** Dead operations with their full context; never processed, only listed and replayed. */
  dead: 'dead',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/** Every queue name, in the order operators read them: what lists the fleet's queues iterates this. */
export const QUEUE_NAMES: readonly QueueName[] = Object.values(QUEUES);
