import { DelayedError } from 'bullmq';
import type { DeliverJobData } from '@singleshot/core';
import { tenantsOf, type RateLimitConfig } from '@singleshot/config';
import { createTenantMetrics } from '@singleshot/observability';
import { BreakerRegistry, breakerGaugeValue, createProvider, type Provider } from '@singleshot/providers';
import { BatchRunner, QUEUES, addDead, requeueDelivery, type BatchOutcome, type DeliverBatchJobData } from '@singleshot/queues';
import { RateLimiter } from '@singleshot/store';
import { PartitionWorkers, consumedPartitions, documentLinkSecret, fairDispatchOf, unsubscribeLinks, type Runtime } from '@singleshot/runtime';
import { signDocumentLink } from '@singleshot/documents';
import { deliver, type DeliverDeps, type DeliverOutcome } from './deliver';
import { outcomeLabel } from './deliver-types';
import { CallLimit } from './call-limit';
import { recordInvalidJob } from './invalid-job';
import { RecoverySweeper } from './sweeper';
import { startFairPump, type FairPump } from './fair-pump';
import { WaitingBoard } from './waiting';
import { tracingOn } from '@singleshot/tracing';
import { tracedOperations, tracedProvider } from './traced-deps';

/** How often each consumed partition's fair queue is pumped when no job was taken to trigger it. */
const FAIR_PUMP_INTERVAL_MS = 1000;
/** A fair queue's job in transit this long lost its mover (a move and an add take milliseconds). */
const FAIR_TRANSIT_STALE_MS = 10_000;

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
 * Starts the deliver worker. A deliver job of its own is a batch of one: the
 * runner (libs/queues batch-runner.ts) runs every job's operations, and an
 * operation that ends `retry`, `conflict` or `waiting` runs again in its own
 * job, delayed (the job itself when it is alone, a new one under its key when
 * it shared a batch).
 */
export function startDelivery(rt: Runtime, options: { providers?: Map<string, Provider[]> } = {}): DeliveryApp {
  const logger = rt.logger.child({ component: 'delivery' });
  const providers = options.providers ?? buildProviders(rt);
  // Traced: claim, commit and provider calls get spans; decided once, so an untraced process calls them directly.
  const traced = tracingOn();
  const tracedChains = traced ? new Map([...providers].map(([channel, list]) => [channel, list.map(tracedProvider)])) : providers;
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
  const waiting = new WaitingBoard();
  const tenants = createTenantMetrics(rt.metrics.registry, tenantsOf(rt.config));
  rt.metrics.setWaitingSource(() => waiting.counts());
  const docs = rt.config.documents;
  let linkSecret: Promise<string> | undefined;
  // Undefined without unsubscribe.publicBaseUrl: then no email carries List-Unsubscribe.
  const unsubscribe = unsubscribeLinks({ redis: rt.redis, keys: rt.keys, config: rt.config.unsubscribe });
  const deps: DeliverDeps = {
    operations: traced ? tracedOperations(rt.operations) : rt.operations,
    waiting,
    tenants,
    providers: (channel: string) => tracedChains.get(channel) ?? [],
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
    ...(unsubscribe ? { unsubscribe } : {}),
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
  rt.metrics.setScheduledSource(() => sweeper.index.scheduledCount());
  const partitions = consumedPartitions(rt.keys, QUEUES.deliver, delivery.partitions, rt.config.redis.formerPartitions);
  const fair = fairDispatchOf(rt);
  const pumped = delivery.partitions ?? Array.from({ length: rt.keys.partitions }, (_, p) => p);
  if (fair) tenants.setWaitingSource(() => fair.waiting(pumped));
  const pump = fair
    ? startFairPump(fair, {
        partitions: pumped,
        intervalMs: FAIR_PUMP_INTERVAL_MS,
        staleMs: FAIR_TRANSIT_STALE_MS,
        logger,
      })
    : undefined;
  // delivery.concurrency bounds operations in flight per process, single jobs and batches alike.
  const limit = new CallLimit(delivery.concurrency);
  const runner = new BatchRunner<DeliverJobData, DeliverOutcome>(
    {
      queue: 'deliver',
      // Without the fair queue a send is only `deliver`: nothing more per operation.
      run: pump ? (op) => limit.run(() => (op.moved ? deliverMoved(op, deps, pump) : deliver(op, deps))) : (op) => limit.run(() => deliver(op, deps)),
      kindOf: outcomeLabel,
      againAfterMs: (outcome) => (outcome.kind === 'retry' || outcome.kind === 'conflict' || outcome.kind === 'wait' ? outcome.delayMs : undefined),
      logFields: (op, outcome) => ({ operationKey: op.operationKey, messageKey: op.messageKey, channel: op.channel, outcome }),
      invalid: (entry, where) => recordInvalidJob(deps, { operationKey: where.key, data: entry, issues: where.issues }),
      // Under the operation key, the id replay, the sweeper and the render's wake-up look up.
      // A retry keeps `moved`: a capped tenant's place is held until it ends.
      handOff: (op, delayMs) => requeueDelivery(rt.queues, op, { delayMs }),
      // On a cluster the fenced commits (each operation's state) and the
      // hand-offs (the job's queue) are on a replica before the job completes:
      // a failover could otherwise take the endings with it (an in-doubt claim
      // is left, which the provider lookup reconciles). None on a single Redis.
      replicas: rt.replicaWaits?.client,
      written: (op) => [rt.keys.op(op.operationKey)],
    },
    logger,
  );
  const worker = new PartitionWorkers<DeliverJobData | DeliverBatchJobData, DeliverOutcome | BatchOutcome>(
    rt,
    partitions,
    (job, token) => runner.run(job, token),
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
      await pump?.stop();
      breakers.dispose();
      await Promise.allSettled([...providers.values()].flat().map((p) => p.close()));
    },
  };
}

/**
 * Sends an operation that came out of the fair queue: its place in the
 * window is free once it starts, not when its job was fetched; a capped
 * tenant's place once its attempt ended for good, not before a retry.
 */
async function deliverMoved(op: DeliverJobData, deps: DeliverDeps, pump: FairPump): Promise<DeliverOutcome> {
  pump.started(op);
  const outcome = await deliver(op, deps);
  if (outcome.kind === 'ended') pump.ended(op);
  return outcome;
}
