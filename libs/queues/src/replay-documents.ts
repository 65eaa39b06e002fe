import type { Queue } from 'bullmq';
import type { RedisClient } from '@singleshot/store';
import type { DeliverJobData, RenderJobData } from '@singleshot/core';
import { DocumentStateStore, type KeyBuilder } from '@singleshot/store';
import { enqueueRenders } from './queues';
import { renderJobSchema } from './schemas';

/**
 * Before a replayed operation's delivery is re-queued: every document it needs
 * that failed for good goes back to pending and its render job is added again.
 * Replaying the ten operations of one failed document runs this ten times;
 * the document's own replay script lets only the first one through, so the
 * document is generated once.
 */
export async function regenerateDocuments(
  job: DeliverJobData,
  by: string,
  deps: { redis: RedisClient; keys: KeyBuilder; retentionMs: number; render: Queue<RenderJobData>; now?: () => number },
): Promise<number> {
  if (!job.documents || job.documents.length === 0) return 0;
  const state = new DocumentStateStore(deps.redis, deps.keys, { retentionMs: deps.retentionMs, ...(deps.now ? { now: deps.now } : {}) });
  let regenerated = 0;
  for (const ref of job.documents) {
    const replayed = await state.replay(ref.documentKey, by);
    if (!replayed) continue;
    const parsed = renderJobSchema.safeParse(JSON.parse(replayed.job));
    if (!parsed.success) throw new Error(`document ${ref.documentKey} was replayed but its render job is unreadable; re-send its event`);
    await enqueueRenders(deps.render, [parsed.data as RenderJobData], replayed.round);
    regenerated += 1;
  }
  return regenerated;
}
