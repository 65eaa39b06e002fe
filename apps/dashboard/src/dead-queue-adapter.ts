import type { Job, Queue } from 'bullmq';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import type { JobCounts, JobStatus } from '@bull-board/api/typings/app';
import type { DeadJobData } from '@singleshot/queues';

/** Where dead records sit: added to the dead queue, never consumed (libs/queues addDead, listDead). */
const RECORD_STATES = ['waiting'] as const;

function failedReasonOf(data: DeadJobData | undefined): string {
  if (!data) return 'dead';
  return `${data.reason}: ${data.error.code} ${data.error.message}`.trim();
}

/**
 * A dead record shown as a failed job: the board's "failed" is the state that
 * asks for a human and carries the Retry button, and the failed reason shows
 * why the operation died. Only the presentation changes; the record stays
 * where libs/queues put it, and the retry is intercepted (board-guard.ts).
 */
function asFailed(job: Job<DeadJobData>): Job<DeadJobData> {
  return new Proxy(job, {
    get(target, prop) {
      if (prop === 'toJSON') return () => ({ ...target.toJSON(), failedReason: failedReasonOf(target.data) });
      if (prop === 'getState') {
        return async () => {
          const state = await target.getState();
          return (RECORD_STATES as readonly string[]).includes(state) ? 'failed' : state;
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * Bull Board adapter of the DLQ: its records appear under "failed" (with
 * "latest"), one card per dead operation, with the reason as the error.
 */
export class DeadQueueAdapter extends BullMQAdapter {
  constructor(private readonly dead: Queue<DeadJobData>) {
    super(dead, {
      allowRetries: true,
      description: 'Dead operations (DLQ). Retry replays the operation under its own key: it cannot double-send.',
    });
  }

  override getJobStatuses(): JobStatus[] {
    return ['failed'];
  }

  override async getJobCounts(): Promise<JobCounts> {
    const counts = await this.dead.getJobCounts(...RECORD_STATES);
    const records = RECORD_STATES.reduce((sum, state) => sum + (counts[state] ?? 0), 0);
    return { active: 0, waiting: 0, 'waiting-children': 0, prioritized: 0, completed: 0, failed: records, delayed: 0, paused: 0 };
  }

  override async getJobs(statuses: JobStatus[], start?: number, end?: number): Promise<Job[]> {
    if (!statuses.includes('failed')) return [];
    const jobs = await this.dead.getJobs([...RECORD_STATES], start, end);
    return jobs.filter(Boolean).map(asFailed);
  }

  override async getJob(id: string): Promise<Job | undefined> {
    const job = await this.dead.getJob(id);
    return job ? asFailed(job) : undefined;
  }
}
