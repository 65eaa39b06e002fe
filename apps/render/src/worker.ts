import { DelayedError, Worker } from 'bullmq';
import type { RenderJobData } from '@singleshot/core';
import type { DocumentStore } from '@singleshot/documents';
import { QUEUES, formatIssues, renderJobSchema } from '@singleshot/queues';
import { RefusalAwareWorker, type Runtime } from '@singleshot/runtime';
import { runMemberSpan, tracingOn } from '@singleshot/tracing';
import { renderDocument, type RenderDeps, type RenderOutcome } from './render';

export interface RenderApp {
  worker: Worker<RenderJobData, RenderOutcome>;
  close(): Promise<void>;
}

/**
 * Starts the render worker: its own queue (`render`) and concurrency, so slow
 * documents never hold up deliveries that need none. Retries are scheduled
 * with `moveToDelayed` on the document's own backoff.
 */
export function startRender(rt: Runtime, options: { store?: DocumentStore } = {}): RenderApp {
  const logger = rt.logger.child({ component: 'render' });
  const policy = rt.config.documents;
  const deps: RenderDeps = {
    documents: rt.documents,
    store: options.store ?? rt.documentStore,
    templates: rt.templates,
    policy,
    wake: async (operationKeys) => {
      // Best effort: a waiting delivery also looks again on its own (waitPollMs).
      await Promise.all(
        operationKeys.map(async (key) => {
          try {
            const job = await rt.queues.deliver.getJob(key);
            if (job && (await job.isDelayed())) await job.promote();
          } catch {
            // Not delayed any more (running, or done): nothing to wake.
          }
        }),
      );
    },
    workerId: rt.workerId,
    logger,
    metrics: rt.documentMetrics,
  };
  // Backs off while Redis refuses commands; counts its jobs for a bounded shutdown.
  const worker = new RefusalAwareWorker<RenderJobData, RenderOutcome>(
    QUEUES.render,
    async (job, token) => {
      const parsed = renderJobSchema.safeParse(job.data);
      if (!parsed.success) {
        const issues = formatIssues(parsed.error);
        logger.error({ event: 'invalid_render_job', jobId: job.id, issues }, 'invalid render job');
        return { kind: 'dead', code: 'INVALID_JOB' };
      }
      const data = parsed.data as RenderJobData;
      // Traced: a `render` span in the trace of the decision that asked for the document.
      const outcome = tracingOn()
        ? await runMemberSpan('render', data.trace, { 'singleshot.document_key': data.documentKey, 'singleshot.message_key': data.messageKey, 'singleshot.document': data.name }, () => renderDocument(data, deps), (o) => o.kind)
        : await renderDocument(data, deps);
      logger.info({ event: 'render_finished', documentKey: parsed.data.documentKey, jobId: job.id, jobAttempt: job.attemptsMade, outcome }, `render ${outcome.kind}`);
      if (outcome.kind === 'retry') {
        await job.moveToDelayed(Date.now() + outcome.delayMs, token);
        throw new DelayedError();
      }
      return outcome;
    },
    {
      connection: rt.connect('worker', 'render-worker'),
      prefix: rt.keys.queuePrefix,
      concurrency: policy.concurrency,
      // The job lock follows the render lease: a killed renderer's job comes back about when its lease ends.
      lockDuration: policy.leaseMs,
      stalledInterval: Math.max(1000, Math.floor(policy.leaseMs / 2)),
      maxStalledCount: 1000,
    },
  );
  worker.on('error', (err) => logger.warn({ event: 'worker_error', err }, 'render worker error'));
  worker.on('failed', (job, err) => {
    if (err instanceof DelayedError || err?.name === 'DelayedError') return;
    logger.warn({ event: 'job_attempt_failed', documentKey: job?.data?.documentKey, jobId: job?.id, err }, 'render job attempt failed (infrastructure); the queue retries it');
  });
  return {
    worker,
    close: async () => {
      await worker.close();
    },
  };
}
