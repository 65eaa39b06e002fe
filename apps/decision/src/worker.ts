import { UnrecoverableError } from 'bullmq';
import { partitionOf, type DecideJobData, type DeliverJobData, type RecipientKind } from '@singleshot/core';
import {
  DECIDE_BATCH_JOB_NAME,
  QUEUES,
  TurnCoalescer,
  addDead,
  decideJobSchema,
  enqueueDeliveryJobs,
  enqueueRenders,
  formatIssues,
  handOffInvalidDecide,
  requeueDecide,
  type DecideBatchJobData,
} from '@singleshot/queues';
import { recipientKindOf } from '@singleshot/providers';
import { waitReplicasOf } from '@singleshot/config';
import { PartitionWorkers, consumedPartitions, type Runtime } from '@singleshot/runtime';
import { decide, type DecideOutcome } from './decide';
import { decideBatch, type DecideBatchOutcome } from './decide-batch';

export interface DecisionApp {
  /** One BullMQ worker per consumed decide partition. */
  worker: PartitionWorkers<DecideJobData | DecideBatchJobData, DecideOutcome | DecideBatchOutcome>;
  close(): Promise<void>;
}

/** Starts the decide worker: a job per message or a batch of messages, fan-out to deliver jobs. */
export function startDecision(rt: Runtime): DecisionApp {
  const logger = rt.logger.child({ component: 'decision' });
  // A channel's providers are fixed for the process: its recipient kind is looked up once.
  const kinds = new Map<string, RecipientKind>();
  const recipientKind = (channel: string): RecipientKind => {
    let kind = kinds.get(channel);
    if (kind === undefined) {
      kind = recipientKindOf((rt.config.providers[channel] ?? []).map((p) => p.type));
      kinds.set(channel, kind);
    }
    return kind;
  };
  const replicated = waitReplicasOf(rt.config) > 0;
  const { batchMax } = rt.config.delivery;
  // The fan-outs of the decide jobs that run in one event-loop turn share
  // `batch` deliver jobs, per deliver partition (libs/queues turn-coalescer.ts). The
  // deliver jobs must be on a replica before the decision is marked and the
  // decide job completes: a failover could otherwise lose them. On a single
  // Redis there is nothing to wait for: no key list is built.
  const fanOut = new TurnCoalescer<DeliverJobData>(async (jobs) => {
    await enqueueDeliveryJobs(rt.queues, jobs, batchMax);
    if (replicated) await rt.replicate(rt.redis, jobs.map((j) => rt.keys.queuePrefixOf(partitionOf(j.operationKey, rt.keys.partitions))));
  }, batchMax);
  const deps = {
    routes: rt.config.routes,
    mailboxes: rt.config.mailboxes,
    templates: rt.templates,
    enqueueDeliveries: (jobs: DeliverJobData[]) => fanOut.add(jobs),
    enqueueRenders: async (jobs: Parameters<typeof enqueueRenders>[1]) => {
      await enqueueRenders(rt.queues.render, jobs);
      if (replicated) await rt.replicate(rt.redis, [rt.keys.queuePrefix]);
    },
    markDecided: (messageKey: string, ops: string[]) => rt.messages.markDecided(messageKey, ops),
    logger,
    metrics: rt.metrics,
    // Mail providers take addresses, twilio-sms E.164 numbers, slack conversation or user ids; the others (http, log) any text.
    recipientKind,
    deadOnArrival: { operations: rt.operations, addDead: (record: Parameters<typeof addDead>[1]) => addDead(rt.queues.dead, record), workerId: rt.workerId },
  };
  const partitions = consumedPartitions(rt.keys, QUEUES.decide, undefined, rt.config.redis.formerPartitions);
  /** One message's decision, with its info line (built only when `info` is on). */
  const decideLogged = async (data: DecideJobData, jobId: string | undefined, jobAttempt: number): Promise<DecideOutcome> => {
    const outcome = await decide(data, deps);
    if (logger.isLevelEnabled('info')) logger.info({ event: 'decided', messageKey: data.messageKey, jobId, jobAttempt, ...outcome }, 'decided');
    return outcome;
  };
  const worker = new PartitionWorkers<DecideJobData | DecideBatchJobData, DecideOutcome | DecideBatchOutcome>(
    rt,
    partitions,
    async (job) => {
      if (job.name === DECIDE_BATCH_JOB_NAME) {
        return decideBatch(job, {
          decideOne: (data) => decideLogged(data, job.id, job.attemptsMade),
          requeue: (data) => requeueDecide(rt.queues, data, String(job.id)),
          poison: (entry, index) => handOffInvalidDecide(rt.queues, job.queueQualifiedName, entry, `${String(job.id)}-invalid-${index}`),
          logger,
        });
      }
      const parsed = decideJobSchema.safeParse(job.data);
      if (!parsed.success) {
        // Poison: a payload no version of this code can decide. Fails at once, kept
        // in the failed set with the reason (no operation exists yet to DLQ).
        const issues = formatIssues(parsed.error);
        const messageKey = (job.data as { messageKey?: unknown } | undefined)?.messageKey;
        logger.error({ event: 'invalid_decide_job', jobId: job.id, messageKey, jobAttempt: job.attemptsMade, issues }, 'invalid decide job');
        throw new UnrecoverableError(`invalid decide job: ${issues.join('; ')}`);
      }
      return decideLogged(parsed.data as DecideJobData, job.id, job.attemptsMade);
    },
    {
      connectionName: 'decide-worker',
      // The processor's writes (deliver jobs, the decision record) go out on
      // the client connection; the worker's fetch and completion commands
      // share its socket writes (a third fewer write syscalls per job).
      shareClientConnection: true,
      concurrency: rt.config.decision.concurrency,
      // A killed worker's job comes back after the stall check; many stalls in a
      // row must not fail a job that simply met a bad hour (nothing vanishes).
      maxStalledCount: 1000,
      // A decision takes milliseconds: a shorter job lock than BullMQ's 30 s
      // default brings the jobs of a killed decision process back within about
      // lockDuration + stalledInterval, instead of several times that.
      lockDuration: 10_000,
      stalledInterval: 5_000,
    },
  );
  worker.on('error', (err) => logger.warn({ event: 'worker_error', err }, 'decide worker error'));
  worker.on('failed', (job, err) => {
    if (job && job.attemptsMade >= (job.opts.attempts ?? 1)) {
      logger.error({ event: 'decide_job_failed', jobId: job.id, messageKey: (job.data as Partial<DecideJobData> | undefined)?.messageKey, messages: (job.data as Partial<DecideBatchJobData> | undefined)?.messages?.length, jobAttempt: job.attemptsMade, err }, 'decide job failed for good');
    }
  });
  return {
    worker,
    close: async () => {
      await worker.close();
    },
  };
}
