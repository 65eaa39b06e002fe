import { CHAOS_ACTION, CHAOS_CHANNEL, CHAOS_SOURCE, CHAOS_TYPE } from './workload';

/**
 * Delivery policy of the chaos fleet: the production time constants divided by
 * ten (lease 30 s → 3 s, breaker cooldown 30 s → 3 s, backoff capped at 4 s),
 * so SIGSTOP past the lease, hanging providers and an open breaker are cheap to
 * wait out. Attempts are many because every fault that hits an operation (a
 * killed holder, a reset, a hang, a 503, a breaker skip) costs it one claim, and
 * a good operation must still end `sent`: one that runs out of attempts under
 * these bounded faults is reported, not excused.
 */
export const CHAOS_DELIVERY = {
  leaseMs: 3000,
  attempts: 30,
  backoffMs: [200, 500, 1000, 2000],
  backoffCapMs: 4000,
  concurrency: 16,
  breaker: { failureThreshold: 5, cooldownMs: 3000 },
} as const;

/**
 * BullMQ's defaults for the decide worker (lockDuration and stalledInterval, 30 s
 * each): the decide job of a SIGKILLed decision process comes back after at most
 * both, and only then are its operations created.
 */
export const DECIDE_STALL_RECOVERY_MS = 30_000 + 30_000;

/**
 * The bound within which every operation must be terminal once the faults have
 * stopped: a decide job stalled on a killed process comes back, then each
 * remaining delivery attempt may wait out a full lease (a holder that died
 * mid-send) and the longest backoff. Generous on purpose: it is a bound a
 * correct pipeline cannot miss, not a performance target; the run reports the
 * slowest time it measured.
 */
export const TERMINAL_BOUND_MS =
  DECIDE_STALL_RECOVERY_MS + CHAOS_DELIVERY.attempts * (CHAOS_DELIVERY.leaseMs + CHAOS_DELIVERY.backoffCapMs);

/**
 * The fleet's config file: Redis and the provider both behind fault proxies.
 * `redis` is the store's section (a single Redis's proxy URL, or a cluster's
 * proxied seeds with the natMap that keeps every node's link on its proxy).
 */
export function chaosConfig(input: { redis: Record<string, unknown>; providerOrigin: string; ingestPort: number }): Record<string, unknown> {
  return {
    redis: input.redis,
    log: { level: 'warn' },
    ingest: { port: input.ingestPort, host: '127.0.0.1', enqueueTimeoutMs: 3000 },
    decision: { metricsPort: 0, concurrency: 16 },
    delivery: { ...CHAOS_DELIVERY, backoffMs: [...CHAOS_DELIVERY.backoffMs], breaker: { ...CHAOS_DELIVERY.breaker }, metricsPort: 0 },
    routes: [
      {
        name: 'chaos',
        match: { source: CHAOS_SOURCE, type: CHAOS_TYPE },
        action: CHAOS_ACTION,
        channel: CHAOS_CHANNEL,
        recipients: 'event',
        template: { subject: 'Order {{data.orderId}}', text: 'Order {{data.orderId}} for {{recipient}}' },
      },
    ],
    providers: {
      [CHAOS_CHANNEL]: [
        {
          name: 'chaos-sink',
          type: 'http',
          url: `${input.providerOrigin}/send`,
          lookupUrl: `${input.providerOrigin}/messages`,
          timeoutMs: 5000,
        },
      ],
    },
  };
}
