import { DelayedError } from 'bullmq';
import type { DeliverJobData } from '@singleshot/core';
import { waitReplicasOf, type RateLimitConfig } from '@singleshot/config';
import { BreakerRegistry, breakerGaugeValue, createProvider, type Provider } from '@singleshot/providers';
import { DELIVER_BATCH_JOB_NAME, QUEUES, addDead, deliverJobSchema, formatIssues, requeueDelivery, type DeliverBatchJobData } from '@singleshot/queues';
import { RateLimiter, ReplicaBarrier } from '@singleshot/store';
import { PartitionWorkers, consumedPartitions, documentLinkSecret, type Runtime } from '@singleshot/runtime';
import { signDocumentLink } from '@singleshot/documents';
import { deliver, type DeliverDeps, type DeliverOutcome } from './deliver';
import { CallLimit } from './call-limit';
import { deliverBatch, type BatchOutcome } from './deliver-batch';
import { recordInvalidJob } from './invalid-job';
import { RecoverySweeper } from './sweeper';
import { WaitingBoard } from './waiting';

export interface DeliveryApp {
  /** One BullMQ worker per consumed deliver partition (`delivery.partitions`, default all). */
  worker: PartitionWorkers<DeliverJobData | DeliverBatchJobData, DeliverOutcome | BatchOutcome>;
  providers: Map<string, Provider[]>;
  breakers: BreakerRegistry;
  sweeper: RecoverySweeper;
  close(): Promise<void>;
}

/** Builds every configured provider chain once per process. */
export function buildProviders(rt: Pick<Runtime, 'config' | 'logger'>): Map<string, Provider[]> {
  const chains = new Map<string, Provider[]>();
  for (const [channel, list] of Object.entries(rt.config.providers)) {
    chains.set(
      channel,
      list.map((options) => createProvider(options, { logger: rt.logger.child({ provider: options.name }) })),
    );
  }
  return chains;
}

/**
 * Starts the deliver worker. Retries and lock conflicts are re-scheduled with
 * `moveToDelayed` (the job stays the same, its id stays the operation key), so
 * a retry can never be lost between "failed" and "re-added".
 */
export function startDelivery(rt: Runtime, options: { providers?: Map<string, Provider[]> } = {}): DeliveryApp {
  const logger = rt.logger.child({ component: 'delivery' });
  const providers = options.providers ?? buildProviders(rt);
  const shutdown = new AbortController();
  const { delivery } = rt.config;
  // Breaker state is per process (see breaker.ts); the gauge shows this process's view.
  const breakers = new BreakerRegistry({
    failureThreshold: delivery.breaker.failureThreshold,
    cooldownMs: delivery.breaker.cooldownMs,
    onStateChange: (channel, provider, state) => {
      rt.metrics.breakerState.set({ channel, provider }, breakerGaugeValue(state));
      logger.warn({ event: 'breaker_state_changed', channel, provider, state }, 'provider circuit breaker changed state');
    },
  });
  for (const [channel, list] of providers) for (const p of list) rt.metrics.breakerState.set({ channel, provider: p.name }, 0);
  const routeLimits = new Map<string, RateLimitConfig>();
  for (const route of rt.config.routes) if (route.limit) routeLimits.set(route.name, route.limit);
  const waiting = new WaitingBoard(rt.operations);
  rt.metrics.setWaitingSource(() => waiting.counts());
  const docs = rt.config.documents;
  let linkSecret: Promise<string> | undefined;
  // No replicas to wait for (a single Redis): a claim or commit is as durable as it gets once it answered.
  const replicated = waitReplicasOf(rt.config) > 0;
  const claims = replicated ? new ReplicaBarrier((keys) => rt.replicate(rt.redis, keys)) : undefined;
  const deps: DeliverDeps = {
    operations: rt.operations,
    ...(claims ? { replicateClaim: (operationKey: string) => claims.after([rt.keys.op(operationKey)]) } : {}),
    waiting,
    providers: (channel: string) => providers.get(channel) ?? [],
    addDead: (record: Parameters<typeof addDead>[1]) => addDead(rt.queues.dead, record),
    policy: delivery,
    breakers,
    limits: {
      limiter: new RateLimiter(rt.redis, rt.keys),
      ...(rt.config.limits.perRecipient ? { perRecipient: rt.config.limits.perRecipient } : {}),
      route: (name: string) => routeLimits.get(name),
    },
    documents: {
      state: rt.documents,
      store: rt.documentStore,
      maxAttachmentBytes: docs.maxAttachmentBytes,
      waitPollMs: docs.waitPollMs,
      link: async (storeKey: string) => {
        linkSecret ??= documentLinkSecret(rt.redis, rt.keys, docs.links.secret);
        const secret = await linkSecret.catch((err: unknown) => {
          linkSecret = undefined;
          throw err;
        });
        const expiresAt = Date.now() + docs.links.ttlSeconds * 1000;
        return { url: signDocumentLink({ baseUrl: docs.links.baseUrl, storeKey, expiresAt, secret }), expiresAt: new Date(expiresAt).toISOString() };
      },
    },
    workerId: rt.workerId,
    logger,
    metrics: rt.metrics,
    shutdown: shutdown.signal,
  };
  const leaseMs = delivery.leaseMs;
  const sweeper = new RecoverySweeper({
    redis: rt.redis,
    keys: rt.keys,
    deliverQueues: rt.queues,
    workerId: rt.workerId,
    intervalMs: delivery.sweepIntervalMs,
    leaseMs,
    logger: logger.child({ component: 'sweeper' }),
  });
  rt.metrics.setInDoubtSource(() => sweeper.index.inDoubtCount());
  const partitions = consumedPartitions(rt.keys, QUEUES.deliver, delivery.partitions, rt.config.redis.formerPartitions);
  // delivery.concurrency bounds operations in flight per process, single jobs and batches alike.
  const limit = new CallLimit(delivery.concurrency);
  const batchDeps = {
    deliverOne: (op: DeliverJobData) => limit.run(() => deliver(op, deps)),
    // An operation of a batch that has to be tried again (retry, lock conflict) gets its own
    // deliver job under its operation key, added before the batch completes (invariants 2, 7).
    followUp: (op: DeliverJobData, delayMs: number) => requeueDelivery(rt.queues, op, { delayMs }),
    invalid: (entry: Parameters<typeof recordInvalidJob>[1]) => recordInvalidJob(deps, entry),
    logger,
    ...(replicated
      ? { replicate: (operationKeys: string[], queueName: string) => rt.replicate(rt.redis, [...operationKeys.map((k) => rt.keys.op(k)), queueName]) }
      : {}),
  };
  const worker = new PartitionWorkers<DeliverJobData | DeliverBatchJobData, DeliverOutcome | BatchOutcome>(
    rt,
    partitions,
    async (job, token) => {
      if (job.name === DELIVER_BATCH_JOB_NAME) return deliverBatch(job, batchDeps);
      const parsed = deliverJobSchema.safeParse(job.data);
      if (!parsed.success) {
        return recordInvalidJob(deps, { operationKey: String(job.id), data: job.data, issues: formatIssues(parsed.error), jobId: job.id });
      }
      const outcome = await limit.run(() => deliver(parsed.data, deps));
      // The fenced commit must be on a replica before the job completes: a
      // failover could otherwise take the ending with it (an in-doubt claim is
      // left, which the provider lookup reconciles). Throws → BullMQ retries the job.
      if (replicated) await rt.replicate(rt.redis, [rt.keys.op(parsed.data.operationKey), job.queueQualifiedName]);
      // One line per attempt with the keys an operator greps for; `jobAttempt`
      // is BullMQ's count (infrastructure retries), the operation's own attempt
      // number is in `singleshot ops show`. Built only when `info` is on.
      if (logger.isLevelEnabled('info')) {
        logger.info(
          { event: 'delivery_ended', operationKey: parsed.data.operationKey, messageKey: parsed.data.messageKey, jobId: job.id, jobAttempt: job.attemptsMade, channel: parsed.data.channel, outcome },
          `delivery ${outcome.kind}`,
        );
      }
      if (outcome.kind === 'retry' || outcome.kind === 'conflict' || outcome.kind === 'waiting') {
        await job.moveToDelayed(Date.now() + outcome.delayMs, token);
        throw new DelayedError();
      }
      return outcome;
    },
    {
      connectionName: 'deliver-worker',
      concurrency: rt.config.delivery.concurrency,
      // BullMQ's job lock follows the operation lease: a stalled holder's job is
      // handed to another worker about when its operation lease runs out.
      lockDuration: leaseMs,
      stalledInterval: Math.max(1000, Math.floor(leaseMs / 2)),
      maxStalledCount: 1000,
    },
  );
  worker.on('error', (err) => logger.warn({ event: 'worker_error', err }, 'deliver worker error'));
  worker.on('failed', (job, err) => {
    if (err instanceof DelayedError || err?.name === 'DelayedError') return;
    const data = job?.data as Partial<DeliverJobData & DeliverBatchJobData> | undefined;
    logger.warn(
      { event: 'job_attempt_failed', operationKey: data?.operationKey, messageKey: data?.messageKey ?? data?.operations?.[0]?.messageKey, operations: data?.operations?.length, jobId: job?.id, jobAttempt: job?.attemptsMade, err },
      'deliver job attempt failed (infrastructure); the queue retries it',
    );
  });
  sweeper.start();
  return {
    worker,
    providers,
    breakers,
    sweeper,
    close: async () => {
      shutdown.abort();
      await sweeper.stop();
      await worker.close();
      breakers.dispose();
      await Promise.allSettled([...providers.values()].flat().map((p) => p.close()));
    },
  };
}
