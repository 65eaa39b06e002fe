import type { RedisClient } from '@singleshot/store';
import { OperationReader, listSuppressed, type KeyBuilder } from '@singleshot/store';
import type { Queues } from './queues';
import type { DeadJobData } from './schemas';

/** A DLQ record with the id and time BullMQ keeps with it. */
export interface DeadEntry extends DeadJobData {
  jobId: string;
}

/** Narrows the DLQ: a reason (`permanent`, `attempts_exhausted`, …), an error code, or a channel. */
export function matchesDeadFilter(entry: DeadJobData, filter: string | undefined): boolean {
  if (!filter) return true;
  const channel = (entry.job as { channel?: unknown }).channel;
  return entry.reason === filter || entry.error.code === filter || channel === filter;
}

/**
 * The dead operations in the DLQ (queue `dead`, jobId = operation key), oldest
 * first, optionally filtered. Reads in pages, so a deep DLQ does not arrive in
 * one reply.
 */
export async function listDead(
  queues: Pick<Queues, 'dead'>,
  options: { filter?: string; limit?: number } = {},
): Promise<DeadEntry[]> {
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  const out: DeadEntry[] = [];
  const page = 500;
  for (let start = 0; out.length < limit; start += page) {
    const jobs = await queues.dead.getJobs(['waiting'], start, start + page - 1, true);
    for (const job of jobs) {
      if (!job?.data || !job.id) continue;
      if (matchesDeadFilter(job.data, options.filter)) out.push({ ...job.data, jobId: job.id });
      if (out.length >= limit) break;
    }
    if (jobs.length < page) break;
  }
  return out;
}

/** A suppressed operation that may be replayed. */
export interface SuppressedEntry {
  operationKey: string;
  suppressedAt: number;
  recipient?: string;
  channel?: string;
  reason?: string;
  error?: string;
}

/** Suppressed operations still suppressed (a replayed one is not listed), newest first. */
export async function listSuppressedOperations(
  deps: { redis: RedisClient; keys: KeyBuilder; retentionMs: number },
  options: { filter?: string; limit?: number } = {},
): Promise<SuppressedEntry[]> {
  const entries = await listSuppressed(deps.redis, deps.keys, { retentionMs: deps.retentionMs, limit: options.limit ?? 1000 });
  if (entries.length === 0) return [];
  const states = await new OperationReader(deps.redis, deps.keys).summaries(entries.map((e) => e.operationKey));
  const out: SuppressedEntry[] = [];
  entries.forEach(({ operationKey, suppressedAt }, i) => {
    const { status, recipient, channel, reason, lastError: error } = states[i] ?? { operationKey };
    if (status !== 'suppressed') return;
    if (options.filter && options.filter !== reason && options.filter !== channel) return;
    out.push({
      operationKey,
      suppressedAt,
      ...(recipient ? { recipient } : {}),
      ...(channel ? { channel } : {}),
      ...(reason ? { reason } : {}),
      ...(error ? { error } : {}),
    });
  });
  return out;
}
