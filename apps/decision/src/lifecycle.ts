import type { DecideJobData, DeliverJobData } from '@singleshot/core';
import { tombstoneCovers, type CancelBy, type Cancellations, type Tombstone } from '@singleshot/store';

/** How long past its time a scheduled operation nobody claimed waits for the sweeper. */
export const SCHEDULE_SWEEP_GRACE_MS = 60_000;

/** What the decision needs for cancels and schedules; absent in tests that need neither. */
export interface LifecycleDeps {
  cancellations: Pick<Cancellations, 'joinKey' | 'cancelMessage' | 'cancelOperation'>;
  /** Creates a scheduled operation (OperationStore.schedule); false when it existed. */
  schedule(job: DeliverJobData, dueAt: number, reason: 'send_at' | 'delay', sweepGraceMs: number): Promise<boolean>;
  /** Adds deliver jobs that run after their delay (each its own job, id = operation key). */
  enqueueLater(jobs: ReadonlyArray<{ job: DeliverJobData; delayMs: number }>): Promise<void>;
  /** Counts operations born cancelled, scheduled. */
  onCancelled?(count: number): void;
  now?: () => number;
}

/**
 * A message that carries a cancellation key joins it before its decision is
 * recorded; when the key was cancelled first, the message is cancelled too
 * (cancel-key.lua), so the decision's record reads the tombstone.
 */
export async function joinCancellationKey(data: DecideJobData, deps: LifecycleDeps | undefined): Promise<void> {
  const { input } = data;
  if (input.kind !== 'event' || input.cancellationKey === undefined) return;
  if (!deps) throw new Error('decide: an event with a cancellationKey needs lifecycle deps');
  const joined = await deps.cancellations.joinKey(input.source, input.cancellationKey, data.messageKey, keepFor(data, deps), input.tenant);
  if (!joined) return;
  const who: CancelBy = { by: joined.by, reason: joined.reason };
  await deps.cancellations.cancelMessage(data.messageKey, joined.cancelled === '*' ? undefined : joined.cancelled, who);
}

/** How much longer than the retention a message's records are kept: until its latest operation is due. */
export function keepFor(data: DecideJobData, deps: Pick<LifecycleDeps, 'now'> | undefined, jobs?: readonly DeliverJobData[]): number {
  const now = (deps?.now ?? Date.now)();
  const input = data.input;
  let latest = input.kind === 'event' && input.sendAt !== undefined ? input.sendAt : 0;
  for (const job of jobs ?? []) if (job.dueAt !== undefined && job.dueAt > latest) latest = job.dueAt;
  return Math.max(0, latest - now);
}

/** Where each planned operation goes once the decision is recorded. */
export interface Settled {
  now: DeliverJobData[];
  later: Array<{ job: DeliverJobData; delayMs: number }>;
  cancelled: number;
}

/**
 * After the decision is recorded: operations a cancel came first for are
 * born cancelled (journaled, never enqueued); operations due later are
 * created `scheduled` and enqueued with their delay; the rest go now.
 */
export async function settle(
  data: DecideJobData,
  jobs: DeliverJobData[],
  tombstone: Tombstone | undefined,
  deps: LifecycleDeps | undefined,
  cancelledBy: CancelBy = { by: 'cancel', reason: '' },
): Promise<Settled> {
  const settled: Settled = { now: [], later: [], cancelled: 0 };
  if (!deps) {
    settled.now = jobs;
    return settled;
  }
  const now = (deps.now ?? Date.now)();
  const cancelled: DeliverJobData[] = [];
  const scheduled: DeliverJobData[] = [];
  for (const job of jobs) {
    if (tombstone && tombstoneCovers(tombstone, job.recipient)) cancelled.push(job);
    // Any time still ahead is scheduled, however close: "send at" promises "not
    // before", and a decision that runs late (a backlog, a restart) can come
    // within a moment of it. Sending such an operation now would send it early.
    else if (job.dueAt !== undefined && job.dueAt > now) scheduled.push(job);
    else settled.now.push(job);
  }
  if (cancelled.length > 0) {
    await Promise.all(cancelled.map((job) => deps.cancellations.cancelOperation(job, cancelledBy)));
    settled.cancelled = cancelled.length;
    deps.onCancelled?.(cancelled.length);
  }
  if (scheduled.length > 0) {
    const reason = data.input.kind === 'event' && data.input.sendAt !== undefined ? 'send_at' : 'delay';
    await Promise.all(scheduled.map((job) => deps.schedule(job, job.dueAt as number, reason, SCHEDULE_SWEEP_GRACE_MS)));
    settled.later = scheduled.map((job) => ({ job, delayMs: (job.dueAt as number) - now }));
  }
  return settled;
}
