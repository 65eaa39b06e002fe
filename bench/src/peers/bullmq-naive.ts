import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { providerClient, startFront, type Arrival } from './front';
import type { PeerOptions } from './options';

interface DeliverData {
  operationKey: string;
  recipient: string;
  event: string;
}

/**
 * (b) The three-stage BullMQ pipeline a team writes first: ingest adds a decide
 * job with jobId = event id, the decide worker adds one deliver job per
 * recipient with jobId = event:recipient, both `removeOnComplete: true` — so a
 * later arrival of a finished event finds its id free again and runs twice.
 */
export async function startBullmqNaive(o: PeerOptions): Promise<void> {
  const connection = new Redis(o.redisUrl ?? '', { maxRetriesPerRequest: null });
  const decide = new Queue<Arrival>('decide', { connection });
  const deliver = new Queue<DeliverData>('deliver', { connection });
  const send = providerClient(o.sinkUrl, o.concurrency);
  const workerConnection = () => new Redis(o.redisUrl ?? '', { maxRetriesPerRequest: null });
  new Worker<Arrival>(
    'decide',
    async (job) => {
      await Promise.all(
        job.data.recipients.map((recipient) => {
          // BullMQ refuses custom ids with a colon.
          const operationKey = `${job.data.id}.${recipient}`;
          return deliver.add('deliver', { operationKey, recipient, event: job.data.data.benchEvent }, { jobId: operationKey, removeOnComplete: true });
        }),
      );
    },
    { connection: workerConnection(), concurrency: o.concurrency },
  );
  new Worker<DeliverData>('deliver', async (job) => send(job.data.operationKey, job.data.recipient, job.data.event), {
    connection: workerConnection(),
    concurrency: o.concurrency,
  });
  await startFront(o.port, async (a) => {
    await decide.add('decide', a, { jobId: a.id, removeOnComplete: true });
    return 'accepted';
  });
}
