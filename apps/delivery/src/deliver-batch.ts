import type { DeliverJobData } from '@singleshot/core';
import { deliverJobSchema, formatIssues } from '@singleshot/queues';
import type { Logger } from '@singleshot/observability';
import type { DeliverOutcome } from './deliver-types';

/** What a batch job came to: how many of its operations ended which way. */
export interface BatchOutcome {
  kind: 'batch';
  operations: number;
  outcomes: Partial<Record<DeliverOutcome['kind'], number>>;
  /** Operations handed on to their own `deliver` job (retry, conflict, waiting). */
  followUps: number;
}

/** What the batch handler needs; the worker wires it, tests pass small literals. */
export interface BatchDeps {
  /** One operation's attempt (`deliver`), inside the process's call limit. */
  deliverOne(op: DeliverJobData): Promise<DeliverOutcome>;
  /** Gives an operation its own `deliver` job (jobId = operation key), delayed by `delayMs`. */
  followUp(op: DeliverJobData, delayMs: number): Promise<unknown>;
  /** Records an unparsable operation dead (`invalid_payload`). */
  invalid(entry: { operationKey: string; data: unknown; issues: string[]; jobId: string | undefined }): Promise<DeliverOutcome>;
  /**
   * Waits until the operations' commits and the queue's writes (follow-up jobs)
   * are on a replica; absent when there are no replicas to wait for (a single Redis).
   */
  replicate?(operationKeys: string[], queueName: string): Promise<void>;
  logger: Logger;
}

/** The part of a BullMQ job the handler reads. */
export interface BatchJob {
  id?: string | undefined;
  data: unknown;
  attemptsMade: number;
  /** The BullMQ key prefix of the job's queue (its hash slot, for the replication wait). */
  queueQualifiedName: string;
}

/**
 * A `batch` deliver job: several operations (of one message or of several
 * decided together), each driven by
 * the ordinary per-operation attempt (`deliver`: claim, reconcile, send,
 * fenced commit, and `finish` as the one place the attempt ends), run
 * concurrently under the process's call limit. Nothing about an operation's
 * protocol changes (docs/protocol.md, invariants 3, 4, 5, 10).
 *
 * An operation that has to be tried again (retry, lock conflict, waiting) gets
 * its own `deliver` job under its operation key, added before this job
 * completes (invariants 2 and 7), so its later attempts take the
 * single-operation path. The replication wait covers every operation of the
 * batch at once. When Redis fails for any operation, the handler throws after
 * the others have settled: BullMQ retries the whole batch, and the operations
 * already sent answer `duplicate` at their claim.
 *
 * A batch job whose worker dies is handed to another worker when its job lock
 * expires; an operation it left `sending` is reconciled by its next claim. The
 * recovery sweeper looks jobs up by operation key, does not see the batch, and
 * may meanwhile re-add a single job for an overdue operation: the claim lets
 * only one of the two through at a time, and a sent operation answers
 * `duplicate`, so the overlap costs a claim, never a second send.
 */
export async function deliverBatch(job: BatchJob, deps: BatchDeps): Promise<BatchOutcome> {
  const raw = (job.data as { operations?: unknown } | null | undefined)?.operations;
  const entries: unknown[] = Array.isArray(raw) ? raw : [job.data];
  const outcome: BatchOutcome = { kind: 'batch', operations: entries.length, outcomes: {}, followUps: 0 };
  const valid: DeliverJobData[] = [];
  const invalid: Array<Promise<DeliverOutcome>> = [];
  entries.forEach((entry, index) => {
    const parsed = deliverJobSchema.safeParse(entry);
    if (parsed.success) {
      valid.push(parsed.data as DeliverJobData);
      return;
    }
    const key = (entry as { operationKey?: unknown } | null | undefined)?.operationKey;
    const issues = Array.isArray(raw) ? formatIssues(parsed.error).map((i) => `operations.${index}.${i}`) : ['operations: expected an array of deliver jobs'];
    invalid.push(deps.invalid({ operationKey: typeof key === 'string' && key.length > 0 ? key : `${String(job.id)}-${index}`, data: entry, issues, jobId: job.id }));
  });
  const results = await Promise.allSettled([...valid.map((op) => deps.deliverOne(op)), ...invalid]);
  const followUps: Array<Promise<unknown>> = [];
  const info = deps.logger.isLevelEnabled('info');
  let failure: unknown;
  results.forEach((result, index) => {
    if (result.status === 'rejected') {
      failure ??= result.reason;
      return;
    }
    const ended = result.value;
    outcome.outcomes[ended.kind] = (outcome.outcomes[ended.kind] ?? 0) + 1;
    const op = valid[index];
    if (!op) return;
    // Built only when `info` is on: at the default production level of the
    // bench (warn) this object would be made for every operation and dropped.
    if (info) {
      deps.logger.info(
        { event: 'delivery_ended', operationKey: op.operationKey, messageKey: op.messageKey, jobId: job.id, jobAttempt: job.attemptsMade, channel: op.channel, outcome: ended },
        `delivery ${ended.kind}`,
      );
    }
    if (ended.kind === 'retry' || ended.kind === 'conflict' || ended.kind === 'waiting') {
      outcome.followUps++;
      followUps.push(deps.followUp(op, ended.delayMs));
    }
  });
  // Every follow-up is in Redis before anything else is decided: the batch
  // completes only after, and a retried batch finds them there.
  const added = await Promise.allSettled(followUps);
  for (const result of added) if (result.status === 'rejected') failure ??= result.reason;
  if (failure !== undefined) throw failure;
  if (deps.replicate) await deps.replicate(valid.map((op) => op.operationKey), job.queueQualifiedName);
  return outcome;
}
