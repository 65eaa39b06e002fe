import { DelayedError, type Worker } from 'bullmq';
import { partitionOf, type DeliverJobData } from '@singleshot/core';
import { QUEUES, digestCloseJobSchema, enqueueDelayedDeliveries, enqueueDeliveries, enqueueDigestClose, formatIssues, type DigestCloseJobData } from '@singleshot/queues';
import { createDigestMetrics } from '@singleshot/observability';
import { RefusalAwareWorker, type Runtime } from '@singleshot/runtime';
import { writeReplicated } from '@singleshot/store';
import { SCHEDULE_SWEEP_GRACE_MS } from './lifecycle';
import { closeAndFlush, type DigestDeps } from './digest-flush';

/**
 * The digest deps of a runtime: the store, the close queue, the normal deliver
 * path for flushes. With replicas to wait for (a cluster), each write a later
 * step relies on is on a replica before that step: the join (and the
 * decision's record of it) before the decide job completes, the close before
 * the flush's job, the flush's job before the digest's items are dropped, the
 * drop before the close job completes. A failover could otherwise take back a
 * member whose event was acknowledged, or a flush whose items are gone.
 */
export function digestDeps(rt: Runtime): DigestDeps {
  const metrics = createDigestMetrics(rt.metrics.registry);
  metrics.setOpenSource(() => rt.digests.openCount());
  // Each write returns only once on a replica, its keys' owners read before it
  // (a failover in between fails the wait; docs/protocol.md); on a single Redis it is the write alone.
  const durably = <T>(keys: string[], write: () => Promise<T>): Promise<T> => writeReplicated(rt.replicaWaits?.client, () => keys, write);
  const partitionOfJob = (job: DeliverJobData) => [rt.keys.queuePrefixOf(partitionOf(job.operationKey, rt.keys.partitions))];
  return {
    onItem: (route) => metrics.items.inc({ route }),
    onFlushed: (reason) => metrics.flushed.inc({ reason }),
    digests: {
      // With the message record: the decision recorded the membership there, for a cancel to find.
      join: (group, messageKey, ...rest) => durably([rt.keys.digestGroup(group), rt.keys.message(messageKey)], () => rt.digests.join(group, messageKey, ...rest)),
      // Before the flush's job: a close taken back by a failover after that job was
      // on a replica would reopen the digest, and a later close of the same seq
      // would name the same flush operation with more members than it sends.
      close: (group, ...rest) => durably([rt.keys.digestGroup(group)], () => rt.digests.close(group, ...rest)),
      flushed: (group, ...rest) => durably([rt.keys.digestGroup(group)], () => rt.digests.flushed(group, ...rest)),
    },
    records: { write: (record) => durably([rt.keys.digestRecord(record.id)], () => rt.digestRecords.write(record)) },
    routes: rt.config.routes,
    templates: rt.templates,
    enqueueClose: (data, jobId, delayMs) => durably([rt.keys.queuePrefix], () => enqueueDigestClose(rt.queues.digest, data, jobId, delayMs)),
    enqueueNow: (job: DeliverJobData) => durably(partitionOfJob(job), () => enqueueDeliveries(rt.queues, [job])),
    enqueueLater: async (job: DeliverJobData, dueAt: number) => {
      await durably([rt.keys.op(job.operationKey)], () => rt.operations.schedule(job, dueAt, 'delay', SCHEDULE_SWEEP_GRACE_MS));
      await durably(partitionOfJob(job), () => enqueueDelayedDeliveries(rt.queues, [{ job, delayMs: dueAt - Date.now() }]));
    },
  };
}

/**
 * The digest close worker: a close job runs at its digest's close time,
 * closes it and enqueues its flush (closeAndFlush). A job that comes early
 * (promoted by hand) goes back to wait; one whose process died comes back
 * after its lock, and its rerun flushes the same digest once.
 */
export function startDigestWorker(rt: Runtime, deps: DigestDeps): Worker<DigestCloseJobData, unknown> {
  const logger = rt.logger.child({ component: 'digest' });
  const worker = new RefusalAwareWorker<DigestCloseJobData, unknown>(
    QUEUES.digest,
    async (job, token) => {
      const parsed = digestCloseJobSchema.safeParse(job.data);
      if (!parsed.success) {
        logger.error({ event: 'invalid_digest_job', jobId: job.id, issues: formatIssues(parsed.error) }, 'invalid digest close job');
        return { state: 'invalid' };
      }
      const outcome = await closeAndFlush(parsed.data, deps);
      if (outcome.state === 'early') {
        await job.moveToDelayed(outcome.closeAt, token);
        throw new DelayedError();
      }
      logger.info({ event: 'digest_closed', group: parsed.data.group, seq: parsed.data.seq, jobId: job.id, outcome: outcome.state }, 'digest close ran');
      return outcome;
    },
    {
      connection: rt.connect('worker', 'digest-worker'),
      prefix: rt.keys.queuePrefix,
      concurrency: 8,
      maxStalledCount: 1000,
      lockDuration: 10_000,
      stalledInterval: 5_000,
    },
  );
  worker.on('error', (err) => logger.warn({ event: 'worker_error', err }, 'digest worker error'));
  worker.on('failed', (job, err) => {
    if (err instanceof DelayedError || err?.name === 'DelayedError') return;
    logger.warn({ event: 'digest_close_failed', jobId: job?.id, code: (err as { code?: string }).code, err }, 'digest close attempt failed; the queue retries it');
  });
  return worker;
}
