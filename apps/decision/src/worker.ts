import { UnrecoverableError } from 'bullmq';
import { partitionOf, type DecideJobData, type DeliverJobData, type RecipientKind } from '@singleshot/core';
import {
  BatchRunner,
  QUEUES,
  TurnCoalescer,
  addDead,
  enqueueDelayedDeliveries,
  enqueueDeliveryJobs,
  enqueueRenders,
  handOffInvalidDecide,
  requeueDecide,
  type BatchOutcome,
  type DecideBatchJobData,
} from '@singleshot/queues';
import { recipientKindOf } from '@singleshot/providers';
import { PartitionWorkers, consumedPartitions, fairDispatchOf, type Runtime } from '@singleshot/runtime';
import { annotateActive, currentTraceparent, stampTrace, tracingOn } from '@singleshot/tracing';
import { decide, type DecideOutcome } from './decide';
import { routeMatches } from './route-match';
import { digestDeps, startDigestWorker } from './digest-worker';
import { writeReplicated, type MessageDigest } from '@singleshot/store';

export interface DecisionApp {
  /** One BullMQ worker per consumed decide partition. */
  worker: PartitionWorkers<DecideJobData | DecideBatchJobData, DecideOutcome | BatchOutcome>;
  close(): Promise<void>;
}

/** A decision inside the runner's `decide` span: the routes it took and the operations it made on the span. */
async function decideTraced(data: DecideJobData, deps: Parameters<typeof decide>[1]): Promise<DecideOutcome> {
  const outcome = await decide(data, deps);
  const routes = deps.routes.filter((r) => routeMatches(r.match, data.input)).map((r) => r.name);
  annotateActive({ 'singleshot.routes': routes.join(','), 'singleshot.operations': outcome.operations, 'singleshot.redelivered': outcome.redelivered, 'singleshot.unrouted': outcome.unrouted });
  return outcome;
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
  // On a cluster each add below returns only once on a replica, its keys'
  // owners read before it (writeReplicated; docs/protocol.md); on a single
  // Redis there is nothing to wait for: no key list is built.
  const replicas = rt.replicaWaits?.client;
  const { batchMax } = rt.config.delivery;
  // The fan-outs of the decide jobs that run in one event-loop turn share
  // `batch` deliver jobs, per deliver partition (libs/queues turn-coalescer.ts). The
  // deliver jobs must be on a replica before the decision is marked and the
  // decide job completes: a failover could otherwise lose them.
  // With tenants, a fan-out joins its tenants' fair queues, and what the deliver queues have room for goes on at once.
  const fair = fairDispatchOf(rt);
  const fanOut = new TurnCoalescer<DeliverJobData>(async (jobs) => {
    await writeReplicated(
      replicas,
      // With the records of the decisions (written before, on this connection): a
      // cancel must find every operation a failover cannot take back.
      () => [...new Set([...jobs.map((j) => rt.keys.queuePrefixOf(partitionOf(j.operationKey, rt.keys.partitions))), ...jobs.map((j) => rt.keys.message(j.messageKey))])],
      () => (fair ? fair.offer(jobs) : enqueueDeliveryJobs(rt.queues, jobs, batchMax)),
    );
  }, batchMax);
  const digests = rt.config.routes.some((r) => r.digest) ? digestDeps(rt) : undefined;
  const digestWorker = digests ? startDigestWorker(rt, digests) : undefined;
  const deps = {
    ...(digests ? { digests } : {}),
    routes: rt.config.routes,
    mailboxes: rt.config.mailboxes,
    templates: rt.templates,
    // Traced: each deliver and render job carries the decision span's traceparent on.
    enqueueDeliveries: (jobs: DeliverJobData[]) => fanOut.add(tracingOn() ? stampTrace(jobs) : jobs),
    enqueueRenders: async (jobs: Parameters<typeof enqueueRenders>[1]) => {
      if (tracingOn()) stampTrace(jobs);
      await writeReplicated(replicas, () => [rt.keys.queuePrefix], () => enqueueRenders(rt.queues.render, jobs));
    },
    // Traced: the decision's traceparent goes with it (the story page's trace id).
    recordDecision: (messageKey: string, ops: Array<{ operationKey: string; target: string }>, extraRetentionMs?: number, digestGroups?: MessageDigest[]) =>
      rt.messages.recordDecision(messageKey, ops, extraRetentionMs, tracingOn() ? currentTraceparent() : undefined, digestGroups),
    lifecycle: {
      cancellations: rt.cancellations,
      schedule: (job: DeliverJobData, due: number, reason: 'send_at' | 'delay', sweepGraceMs: number) => rt.operations.schedule(job, due, reason, sweepGraceMs),
      enqueueLater: async (items: ReadonlyArray<{ job: DeliverJobData; delayMs: number }>) => {
        await writeReplicated(replicas, () => items.map((i) => rt.keys.queuePrefixOf(partitionOf(i.job.operationKey, rt.keys.partitions))), () => enqueueDelayedDeliveries(rt.queues, items));
      },
    },
    logger,
    metrics: rt.metrics,
    // Mail providers take addresses, twilio-sms E.164 numbers, slack conversation or user ids; the others (http, log) any text.
    recipientKind,
    deadOnArrival: { operations: rt.operations, addDead: (record: Parameters<typeof addDead>[1]) => addDead(rt.queues.dead, record), workerId: rt.workerId },
  };
  const partitions = consumedPartitions(rt.keys, QUEUES.decide, undefined, rt.config.redis.formerPartitions);
  // A decide job of its own is a batch of one: the runner (libs/queues
  // batch-runner.ts) validates, logs, counts and hands on for both kinds.
  const runner = new BatchRunner<DecideJobData, DecideOutcome>(
    {
      queue: 'decide',
      run: (data) => (tracingOn() ? decideTraced(data, deps) : decide(data, deps)),
      kindOf: (outcome) => (outcome.redelivered ? 'redelivered' : 'decided'),
      // A decision never waits: a failed one throws, and BullMQ's backoff retries it.
      againAfterMs: () => undefined,
      logFields: (data, outcome) => ({ messageKey: data.messageKey, ...outcome }),
      invalid: async (entry, where) => {
        // Poison: a payload no version of this code can decide, and no operation
        // exists yet to DLQ. A job of its own fails at once, kept in the failed
        // set with the reason; a batch's entry is handed to such a job.
        if (where.alone) throw new UnrecoverableError(`invalid decide job: ${where.issues.join('; ')}`);
        await handOffInvalidDecide(rt.queues, where.queueQualifiedName, entry, `${String(where.jobId)}-invalid-${where.index}`);
        return undefined;
      },
      handOff: (data, delayMs, batchJobId) => requeueDecide(rt.queues, data, batchJobId, delayMs),
    },
    logger,
  );
  const worker = new PartitionWorkers<DecideJobData | DecideBatchJobData, DecideOutcome | BatchOutcome>(
    rt,
    partitions,
    (job) => runner.run(job),
    {
      connectionName: 'decide-worker',
      // The processor's writes (deliver jobs, the decision record) go out on
      // the client connection; the worker's fetch and completion commands
      // share its socket writes: fewer write syscalls per job.
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
      await Promise.all([worker.close(), digestWorker?.close()]);
    },
  };
}
