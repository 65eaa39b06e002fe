import { DelayedError } from 'bullmq';
import type { Logger } from '@singleshot/observability';
import type { ReplicaWaits } from '@singleshot/store';
import { runMemberSpan, startBatchSpan, tracingOn, type SpanRef } from '@singleshot/tracing';
import { firstBackoffMs } from './batch-jobs';
import { BATCH_JOB_NAME } from './batch-plan';
import { DECIDE_OPTIONS, DELIVER_OPTIONS } from './queues';
import { decideJobSchema, deliverJobSchema, formatIssues } from './schemas';

/** What the runner reads of a BullMQ job; a BullMQ `Job` has all of it. */
export interface RunnerJob {
  id?: string | undefined;
  name: string;
  data: unknown;
  attemptsMade: number;
  /** The BullMQ key prefix of the job's queue (its hash slot, for the replication wait). */
  queueQualifiedName: string;
  moveToDelayed(timestamp: number, token?: string): Promise<void>;
}

/** Where an entry that is no valid member was found. */
export interface InvalidMember {
  /** The job carries this entry alone: it is the entry's own job. */
  alone: boolean;
  /** Its place in the batch (0 for a job of its own). */
  index: number;
  jobId: string | undefined;
  queueQualifiedName: string;
  /** The validation issues, with the place in the batch. */
  issues: string[];
  /** The entry's own key where it has one; else the job id (and its place in a batch). */
  key: string;
}

/** What a job carrying several members came to: how many ended which way. */
export interface BatchOutcome {
  kind: 'batch';
  members: number;
  /** Members per outcome kind (`sent`, `decided`, …; `failed` for a member whose run threw). */
  outcomes: Partial<Record<string, number>>;
  /** Members handed on to a job of their own (to run again, after a failure, or to fail there). */
  followUps: number;
}

/**
 * What tells the two queues' jobs apart, one line each so both read alike:
 * the field of a batch job's data that lists its members, the field of a
 * member holding its key (its own job's id), the member's payload schema,
 * and the delay before a member whose run threw inside a batch runs again in
 * a job of its own (the first step of the queue's backoff).
 */
export const MEMBER_KINDS = {
  decide: { listField: 'messages', keyField: 'messageKey', schema: decideJobSchema, failedDelayMs: firstBackoffMs(DECIDE_OPTIONS) },
  deliver: { listField: 'operations', keyField: 'operationKey', schema: deliverJobSchema, failedDelayMs: firstBackoffMs(DELIVER_OPTIONS) },
} as const;

/**
 * The per-member side of one queue (decide, deliver): the runner does the
 * rest, the same way for both. `T` is a member (a job of its own's payload),
 * `R` what running it came to.
 */
export interface MemberHandler<T, R> {
  /** The queue: names its batch field, member key, schema, backoff and log events (`MEMBER_KINDS`). */
  readonly queue: keyof typeof MEMBER_KINDS;
  /** One member's work, exactly as a job of its own does it. */
  run(member: T): Promise<R>;
  /** The outcome's name, for counting. */
  kindOf(result: R): string;
  /** When the member must run again (retry, lock conflict, waiting): after this many ms; else undefined. */
  againAfterMs(result: R): number | undefined;
  /** The member's fields of its `info` line (built only when `info` is on). */
  logFields(member: T, result: R): Record<string, unknown>;
  /**
   * An entry that is no valid member: resolves to its result when it ended
   * here (recorded dead), to undefined when it was handed to a job of its own;
   * throws to fail the job (a job of its own that fails at once).
   */
  invalid(entry: unknown, where: InvalidMember): Promise<R | undefined>;
  /** Gives a member of a batch a job of its own, to run after `delayMs`. */
  handOff(member: T, delayMs: number, batchJobId: string): Promise<unknown>;
  /**
   * The replica waits of the connection the members' writes go out on, on a
   * Redis Cluster: the job completes or moves only once the keys `written`
   * names, and the job's queue (hand-offs), are on a replica; their owners
   * are read before any member runs. Absent on a single Redis: no wait, no
   * key list.
   */
  replicas?: ReplicaWaits | undefined;
  /** The keys a member's run writes that a failover must not take back once its job completes (with `replicas`). */
  written?(member: T): readonly string[];
}

/** The keys a job's replica wait covers and their masters before any member ran. */
type Written = { keys: string[]; ownersBefore: string };

/**
 * Runs decide and deliver jobs, one member or several, the same way: each
 * member goes through the queue's per-member handler, and the runner owns
 * what is common: validation, counting, the `info` line per member, the
 * replica wait, and what becomes of a member that must run again.
 *
 * A job of its own is a batch of one, whose job is already the member's own:
 * - **Again later** (retry, conflict, waiting): a member alone moves its own
 *   job to delayed (same id, same BullMQ attempts, nothing added: a retry
 *   can never be lost between "completed" and "re-added"); a member of a
 *   batch gets a job of its own, delayed by the same amount, before the
 *   batch completes. Either way the member's next attempt runs in its own
 *   job, under its key.
 * - **Its run threw** (Redis went away mid-way): a member alone throws, and
 *   BullMQ retries its job with the queue's backoff; a member of a batch gets
 *   a job of its own after the first backoff step, as if it had been alone,
 *   while the others stay done.
 * - **Invalid**: the handler decides (deliver: recorded dead; decide: a job
 *   of its own that fails at once, with the reason).
 *
 * Ack after effect (docs/protocol.md, invariants 2 and 7): a job completes
 * only once every member's ending is recorded or its own job is in Redis; if
 * a hand-off cannot be added, the job throws after the others settled and
 * BullMQ retries it whole (members already done find their record: a
 * decision `redelivered`, a claim `duplicate`).
 */
export class BatchRunner<T, R> {
  private readonly kind: (typeof MEMBER_KINDS)[keyof typeof MEMBER_KINDS];
  /** Picks the log events: each queue keeps the names operators know. */
  private readonly delivers: boolean;

  constructor(
    private readonly handler: MemberHandler<T, R>,
    private readonly logger: Logger,
  ) {
    this.kind = MEMBER_KINDS[handler.queue];
    this.delivers = handler.queue === 'deliver';
  }

  /** Runs one BullMQ job of the handler's queue; `token` is the job's lock token (for `moveToDelayed`). */
  run(job: RunnerJob, token?: string): Promise<R | BatchOutcome> {
    return job.name === BATCH_JOB_NAME ? this.runBatch(job) : this.runAlone(job, token);
  }

  /** A job of its own: the same steps as a batch's, without the lists a batch needs (the hot path). */
  private async runAlone(job: RunnerJob, token: string | undefined): Promise<R> {
    const { handler } = this;
    const parsed = this.kind.schema.safeParse(job.data);
    if (!parsed.success) {
      const ended = await this.invalid(job, job.data, 0, true, formatIssues(parsed.error));
      if (ended === undefined) throw new TypeError(`the ${handler.queue} handler left an invalid job of its own unended`);
      return ended;
    }
    const member = parsed.data as T;
    const written = this.writtenBy([member], job);
    // Traced, the member's line is written inside its span (trace_id, span_id).
    const traced = tracingOn();
    const result = traced ? await this.runTraced(member, job) : await handler.run(member);
    if (!traced) this.ended(job, member, result);
    // The member's commit must be on a replica before the job completes or
    // moves: a failover could otherwise take the ending with it. Throws →
    // BullMQ retries the job.
    if (written) await this.onReplica(written);
    const again = handler.againAfterMs(result);
    if (again !== undefined) {
      await job.moveToDelayed(Date.now() + again, token);
      throw new DelayedError();
    }
    return result;
  }

  /** A `batch` job: every member at once, then their hand-offs, then the replica wait. */
  private async runBatch(job: RunnerJob): Promise<BatchOutcome> {
    const { handler } = this;
    const { listField, schema } = this.kind;
    const raw = (job.data as Record<string, unknown> | null | undefined)?.[listField];
    const listed = Array.isArray(raw);
    const entries: unknown[] = listed ? raw : [job.data];
    const valid: T[] = [];
    const refused: Array<{ entry: unknown; index: number; issues: string[] }> = [];
    entries.forEach((entry, index) => {
      const parsed = schema.safeParse(entry);
      if (parsed.success) valid.push(parsed.data as T);
      else refused.push({ entry, index, issues: listed ? formatIssues(parsed.error).map((i) => `${listField}.${index}.${i}`) : [`${listField}: expected an array of ${handler.queue} jobs`] });
    });
    // Read before any member writes (see MemberHandler.replicas).
    const written = this.writtenBy(valid, job);
    // Traced: the batch is a trace of its own, linked to each member's span in its event's trace.
    const batchSpan = tracingOn() ? startBatchSpan(`${handler.queue}.batch`, { 'singleshot.job_id': String(job.id), 'singleshot.members': valid.length }) : undefined;
    try {
      return await this.settleBatch(job, valid, refused, written, batchSpan);
    } finally {
      batchSpan?.end();
    }
  }

  private async settleBatch(
    job: RunnerJob,
    valid: T[],
    refused: Array<{ entry: unknown; index: number; issues: string[] }>,
    written: Written | undefined,
    batchSpan: SpanRef | undefined,
  ): Promise<BatchOutcome> {
    const { handler } = this;
    const { failedDelayMs } = this.kind;
    const outcome: BatchOutcome = { kind: 'batch', members: valid.length + refused.length, outcomes: {}, followUps: 0 };
    const runs: Array<Promise<R>> = valid.map((member) => (batchSpan ? this.runTraced(member, job, batchSpan) : handler.run(member)));
    const invalid: Array<Promise<R | undefined>> = refused.map(({ entry, index, issues }) => this.invalid(job, entry, index, false, issues));
    const batchId = String(job.id);
    const handOffs: Array<Promise<unknown>> = [];
    // Settled together, so no rejection waits unhandled while others run.
    const results: Array<PromiseSettledResult<R | undefined>> = await Promise.allSettled(invalid.length === 0 ? runs : [...runs, ...invalid]);
    let failure: unknown;
    results.forEach((result, index) => {
      const member = valid[index];
      if (member === undefined) {
        // An invalid entry: ended by the handler, or handed to a job of its own.
        if (result.status === 'rejected') failure ??= result.reason;
        else if (result.value === undefined) {
          count(outcome, 'invalid');
          outcome.followUps++;
        } else count(outcome, handler.kindOf(result.value));
        return;
      }
      if (result.status === 'rejected') {
        count(outcome, 'failed');
        outcome.followUps++;
        this.logger.warn(
          { event: 'batch_member_requeued', queue: handler.queue, jobId: job.id, key: this.keyIn(member), err: result.reason },
          'a member failed inside a batch job: it is tried again in a job of its own',
        );
        handOffs.push(handler.handOff(member, failedDelayMs, batchId));
        return;
      }
      // A member's run always resolves to its result (only `invalid` may resolve to undefined).
      const ended = result.value as R;
      count(outcome, handler.kindOf(ended));
      if (!batchSpan) this.ended(job, member, ended);
      const again = handler.againAfterMs(ended);
      if (again !== undefined) {
        outcome.followUps++;
        handOffs.push(handler.handOff(member, again, batchId));
      }
    });
    // Every hand-off is in Redis before the batch completes, and a retried
    // batch finds them there; the first failure fails the batch.
    if (handOffs.length > 0) for (const result of await Promise.allSettled(handOffs)) if (result.status === 'rejected') failure ??= result.reason;
    if (failure !== undefined) throw failure;
    if (written) await this.onReplica(written);
    return outcome;
  }

  /**
   * With replica waits: the keys the members and the job's queue write, and
   * their masters now, read before any member runs (a failover that moves
   * them before the wait fails it); undefined on a single Redis.
   */
  private writtenBy(members: readonly T[], job: RunnerJob): Written | undefined {
    const { replicas, written } = this.handler;
    if (!replicas) return undefined;
    const keys = [...members.flatMap((member) => written?.(member) ?? []), job.queueQualifiedName];
    return { keys, ownersBefore: replicas.owners(keys) };
  }

  /** Resolves once `written` is on a replica; rejects when a failover may lose it (BullMQ retries the job). */
  private async onReplica(written: Written): Promise<void> {
    await this.handler.replicas?.after(written.keys, written.ownersBefore);
  }

  /**
   * A member's run in its own span, a child of the `trace` it carries
   * (libs/tracing job-spans.ts), its `info` line written inside it; only when
   * tracing is on.
   */
  private runTraced(member: T, job: RunnerJob, batchSpan?: SpanRef): Promise<R> {
    const { handler } = this;
    const fields = member as { trace?: unknown };
    const key = this.keyIn(member);
    return runMemberSpan(
      handler.queue,
      typeof fields.trace === 'string' ? fields.trace : undefined,
      { [`singleshot.${this.kind.keyField === 'messageKey' ? 'message_key' : 'operation_key'}`]: typeof key === 'string' ? key : undefined, 'singleshot.job_id': String(job.id), 'singleshot.job_attempt': job.attemptsMade },
      async () => {
        const result = await handler.run(member);
        this.ended(job, member, result);
        return result;
      },
      (result) => handler.kindOf(result),
      batchSpan,
    );
  }

  /** Logs an entry that is no valid member, then hands it to the handler. */
  private invalid(job: RunnerJob, entry: unknown, index: number, alone: boolean, issues: string[]): Promise<R | undefined> {
    const own = this.keyIn(entry);
    const key = alone ? String(job.id) : typeof own === 'string' && own.length > 0 ? own : `${String(job.id)}-${index}`;
    this.logger.error(
      { event: this.delivers ? 'invalid_deliver_job' : 'invalid_decide_job', jobId: job.id, jobAttempt: job.attemptsMade, key, index, issues },
      `invalid ${this.handler.queue} job`,
    );
    return this.handler.invalid(entry, { alone, index, jobId: job.id, queueQualifiedName: job.queueQualifiedName, issues, key });
  }

  /**
   * One line per member's attempt with the keys an operator greps for;
   * `jobAttempt` is BullMQ's count (infrastructure retries). Built only when
   * `info` is on: at the production level (warn) this object would be made
   * for every member and dropped.
   */
  private ended(job: RunnerJob, member: T, result: R): void {
    if (!this.logger.isLevelEnabled('info')) return;
    this.logger.info(
      { event: this.delivers ? 'delivery_ended' : 'decided', jobId: job.id, jobAttempt: job.attemptsMade, ...this.handler.logFields(member, result) },
      `${this.handler.queue} ${this.handler.kindOf(result)}`,
    );
  }

  private keyIn(entry: unknown): unknown {
    return entry !== null && typeof entry === 'object' ? (entry as Record<string, unknown>)[this.kind.keyField] : undefined;
  }
}

function count(outcome: BatchOutcome, kind: string): void {
  outcome.outcomes[kind] = (outcome.outcomes[kind] ?? 0) + 1;
}
