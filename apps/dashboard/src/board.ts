import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import type { QueueAdapterOptions } from '@bull-board/api/typings/app';
import { ExpressAdapter } from '@bull-board/express';
import type { Router } from 'express';
import type { Queues } from '@singleshot/queues';
import { DeadQueueAdapter } from './dead-queue-adapter';

export const BOARD_PATH = '/admin/queues';

/**
 * Bull Board over every queue, the DLQ included. Completed decide and deliver
 * jobs have no Retry button: re-running one is a no-op at best (its message or
 * operation is already done), and would only confuse.
 */
export function boardRouter(queues: Pick<Queues, 'decideAll' | 'deliverAll' | 'dead'> & Partial<Pick<Queues, 'render' | 'digest'>>): Router {
  // BullMQAdapter's options type omits allowCompletedRetries, which the base adapter reads.
  const doneIsDone = { allowCompletedRetries: false } as Partial<QueueAdapterOptions>;
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(BOARD_PATH);
  createBullBoard({
    queues: [
      // One entry per partition (named decide-07 … with several partitions).
      ...queues.decideAll.map((q) => new BullMQAdapter(q, { ...doneIsDone, description: 'Classify, route, fan out: a job per message (job id = message key), or a batch job with several messages.' })),
      ...queues.deliverAll.map((q) => new BullMQAdapter(q, { ...doneIsDone, description: 'Claim, send, commit: a deliver job per operation (job id = operation key), or a batch job with several operations.' })),
      ...(queues.render
        ? [new BullMQAdapter(queues.render, { ...doneIsDone, description: 'One job per document (job id = document key): generate, store, wake the deliveries waiting for it.' })]
        : []),
      new DeadQueueAdapter(queues.dead),
      // Delayed until each digest's close time; a failed one (its route gone from the config) waits here to be retried.
      ...(queues.digest
        ? [new BullMQAdapter(queues.digest, { ...doneIsDone, description: 'One close job per digest (job id = digest id), due at its close time: close the digest and enqueue its one flush operation.' })]
        : []),
    ],
    serverAdapter,
    // The dashboard's own pages, from the board's header (it has no other menu).
    options: { uiConfig: { boardTitle: 'singleshot', miscLinks: [{ text: 'Open digests', url: '/admin/digests' }, { text: 'Tenants', url: '/admin/tenants' }, { text: 'Story of a notification', url: '/admin/story' }] } },
  });
  return serverAdapter.getRouter() as Router;
}
