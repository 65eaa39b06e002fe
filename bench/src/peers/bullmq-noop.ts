import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { providerClient, startFront, type Arrival } from './front';
import type { PeerOptions } from './options';

/**
 * (a) Bare BullMQ: every arrival is one job with a random id, the worker posts
 * once per recipient. No dedup at all: the ceiling of the queue itself.
 */
export async function startBullmqNoop(o: PeerOptions): Promise<void> {
  const connection = new Redis(o.redisUrl ?? '', { maxRetriesPerRequest: null });
  const queue = new Queue<Arrival>('noop', { connection });
  const send = providerClient(o.sinkUrl, o.concurrency);
  new Worker<Arrival>(
    'noop',
    async (job) => {
      await Promise.all(job.data.recipients.map((to) => send(`${job.data.id}:${to}`, to, job.data.data.benchEvent)));
    },
    { connection: new Redis(o.redisUrl ?? '', { maxRetriesPerRequest: null }), concurrency: o.concurrency },
  );
  await startFront(o.port, async (a) => {
    await queue.add('arrival', a);
    return 'accepted';
  });
}
