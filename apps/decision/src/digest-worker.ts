import { DelayedError, type Worker } from 'bullmq';
import type { DeliverJobData } from '@singleshot/core';
import { QUEUES, digestCloseJobSchema, enqueueDelayedDeliveries, enqueueDeliveries, enqueueDigestClose, formatIssues, type DigestCloseJobData } from '@singleshot/queues';
import { createDigestMetrics } from '@singleshot/observability';
import { RefusalAwareWorker, type Runtime } from '@singleshot/runtime';
import { SCHEDULE_SWEEP_GRACE_MS } from './lifecycle';
import { closeAndFlush, type DigestDeps } from './digest-flush';

/** The digest deps of a runtime: the store, the close queue, the normal deliver path for flushes. */
export function digestDeps(rt: Runtime): DigestDeps {
  const metrics = createDigestMetrics(rt.metrics.registry);
  metrics.setOpenSource(() => rt.digests.openCount());
  return {
    onItem: (route) => metrics.items.inc({ route }),
    onFlushed: (reason) => metrics.flushed.inc({ reason }),
    digests: rt.digests,
    records: rt.digestRecords,
    routes: rt.config.routes,
    templates: rt.templates,
    enqueueClose: (data, jobId, delayMs) => enqueueDigestClose(rt.queues.digest, data, jobId, delayMs),
    enqueueNow: (job: DeliverJobData) => enqueueDeliveries(rt.queues, [job]),
    enqueueLater: async (job: DeliverJobData, dueAt: number) => {
      await rt.operations.schedule(job, dueAt, 'delay', SCHEDULE_SWEEP_GRACE_MS);
      await enqueueDelayedDeliveries(rt.queues, [{ job, delayMs: dueAt - Date.now() }]);
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
