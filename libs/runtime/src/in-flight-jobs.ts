/**
 * Jobs this process is running, by queue (summed over partitions). Kept in
 * memory by the workers (`RefusalAwareWorker`) at no cost to Redis, so a
 * shutdown that gives up can say what it abandons.
 */
const running = new Map<string, number>();

/** Counts one more job of `queue` as running. */
export function jobStarted(queue: string): void {
  running.set(queue, (running.get(queue) ?? 0) + 1);
}

/** Counts one job of `queue` as done (completed, failed, or abandoned by its worker). */
export function jobEnded(queue: string): void {
  const n = (running.get(queue) ?? 0) - 1;
  if (n > 0) running.set(queue, n);
  else running.delete(queue);
}

/** Running jobs by queue; a queue with none is absent. */
export function inFlightJobs(): Record<string, number> {
  return Object.fromEntries(running);
}
