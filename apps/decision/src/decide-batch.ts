import type { DecideJobData } from '@singleshot/core';
import { decideJobSchema, formatIssues } from '@singleshot/queues';
import type { Logger } from '@singleshot/observability';
import type { DecideOutcome } from './decide';

/** What a batch decide job came to. */
export interface DecideBatchOutcome {
  kind: 'batch';
  messages: number;
  /** Messages decided here for the first time. */
  decided: number;
  /** Messages found decided before (a redelivered batch, or a race between two ingest processes). */
  redelivered: number;
  /** Messages whose decision failed here and that were given a decide job of their own. */
  requeued: number;
  /** Entries that are no decide job, each handed to a job of its own that fails with the reason. */
  invalid: number;
}

/** What the batch handler needs; the worker wires it, tests pass small literals. */
export interface DecideBatchDeps {
  /** One message's decision (`decide`: fan-out added before the decision is recorded). */
  decideOne(data: DecideJobData): Promise<DecideOutcome>;
  /** Gives one message its own decide job, delayed by the decide job's first backoff step (requeueDecide). */
  requeue(data: DecideJobData): Promise<void>;
  /**
   * Gives an entry that is no decide job a job of its own, which the worker
   * fails at once with the reason: it is kept in the failed set, as a single
   * invalid decide job is.
   */
  poison(entry: unknown, index: number): Promise<void>;
  logger: Logger;
}

/** The part of a BullMQ job the handler reads. */
export interface DecideBatchJob {
  id?: string | undefined;
  data: unknown;
}

/**
 * A `batch` decide job: the first arrivals of several messages that ingest
 * accepted in one event-loop turn. Each message is decided exactly as a
 * single decide job is (`decide`: every deliver job added before the decision
 * is recorded); they run concurrently, so their fan-outs meet in the
 * worker's coalescer and share batch deliver jobs.
 *
 * A message whose decision fails (a template that throws, Redis refusing one
 * write) gets its own decide job, added before this job completes (ack after
 * effect, docs/protocol.md invariants 2 and 7), and is tried again alone with
 * the decide job's attempts and backoff; the others stay decided. If that add
 * fails too, the batch job throws and BullMQ retries it whole: the messages
 * already decided find their decision recorded (`redelivered`) and re-add
 * deliver jobs that a claim turns into `duplicate`, never a second send.
 */
export async function decideBatch(job: DecideBatchJob, deps: DecideBatchDeps): Promise<DecideBatchOutcome> {
  const raw = (job.data as { messages?: unknown } | null | undefined)?.messages;
  const entries: unknown[] = Array.isArray(raw) ? raw : [job.data];
  const outcome: DecideBatchOutcome = { kind: 'batch', messages: entries.length, decided: 0, redelivered: 0, requeued: 0, invalid: 0 };
  const valid: DecideJobData[] = [];
  const handOffs: Array<Promise<void>> = [];
  entries.forEach((entry, index) => {
    const parsed = decideJobSchema.safeParse(entry);
    if (parsed.success) {
      valid.push(parsed.data as DecideJobData);
      return;
    }
    outcome.invalid++;
    const messageKey = (entry as { messageKey?: unknown } | null | undefined)?.messageKey;
    deps.logger.error({ event: 'invalid_decide_entry', jobId: job.id, index, messageKey, issues: formatIssues(parsed.error) }, 'invalid entry in a decide batch: handed to a job of its own, which fails');
    handOffs.push(deps.poison(entry, index));
  });
  const results = await Promise.allSettled(valid.map((data) => deps.decideOne(data)));
  results.forEach((result, index) => {
    const data = valid[index] as DecideJobData;
    if (result.status === 'fulfilled') {
      if (result.value.redelivered) outcome.redelivered++;
      else outcome.decided++;
      return;
    }
    outcome.requeued++;
    deps.logger.warn({ event: 'decide_requeued', jobId: job.id, messageKey: data.messageKey, err: result.reason }, 'decision failed inside a batch: the message is tried again in a decide job of its own');
    handOffs.push(deps.requeue(data));
  });
  // Every hand-off is in Redis before the batch completes; the first failure fails the batch.
  const added = await Promise.allSettled(handOffs);
  for (const result of added) if (result.status === 'rejected') throw result.reason;
  return outcome;
}
