import { waitUntil } from './free-port';

/** The states in which a job is still owed work: anything but completed or failed. */
const PENDING_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children'] as const;

/** What the harness needs of a BullMQ queue (structural, so the harness imports nothing of ours). */
export interface CountableQueue {
  readonly name: string;
  getJobCounts(...types: (typeof PENDING_STATES)[number][]): Promise<Record<string, number>>;
}

/**
 * The queues of a deployment in which jobs wait (the `Queues` of
 * @singleshot/queues fits): every decide and deliver partition, and the
 * render queue. The dead-letter queue is left out: its jobs are records that
 * stay until an operator replays them.
 */
export interface PendingQueues {
  decideAll: readonly CountableQueue[];
  deliverAll: readonly CountableQueue[];
  render?: CountableQueue;
}

/**
 * Waits until no job is waiting, active, delayed, prioritized or waiting for
 * children on any partition of `queues`. On timeout the error names the queues
 * that still held jobs, with their counts. An aborted `signal` ends the wait
 * at once, without an error (a run that is being stopped).
 */
export async function waitForQueuesIdle(
  queues: PendingQueues,
  {
    timeoutMs = 60_000,
    intervalMs = 50,
    what = 'the queues to drain',
    signal,
  }: { timeoutMs?: number; intervalMs?: number; what?: string; signal?: AbortSignal } = {},
): Promise<void> {
  const list = [...queues.decideAll, ...queues.deliverAll, ...(queues.render ? [queues.render] : [])];
  await waitUntil(
    async () => {
      if (signal?.aborted) return true;
      const counts = await Promise.all(list.map(async (q) => ({ name: q.name, counts: await q.getJobCounts(...PENDING_STATES) })));
      const busy = counts.filter(({ counts }) => Object.values(counts).some((n) => n > 0));
      // Thrown, so waitUntil's timeout error says what was left.
      if (busy.length > 0) throw new Error(busy.map(({ name, counts }) => `${name} ${JSON.stringify(counts)}`).join(', '));
      return true;
    },
    what,
    { timeoutMs, intervalMs },
  );
}
