import type { RedisClient } from './connection';
import { assertSlotOwners, slotOwners } from './replica-wait';

/**
 * Coalesces replica waits: every caller of one event-loop turn shares one
 * wait (one `WAIT` per master), sent after all of their writes were answered.
 * `WAIT` covers every write the connection sent before it, so one wait after
 * the turn's claims makes all of them durable on a replica at once, instead of
 * one `WAIT` round trip per operation.
 */
export class ReplicaBarrier {
  private pending: { keys: Set<string>; done: Promise<void> } | undefined;

  /** @param wait the replica wait for a set of keys (`Runtime.replicate` on the connection that wrote them). */
  constructor(private readonly wait: (keys: readonly string[]) => Promise<void>) {}

  /**
   * Resolves once the writes to `keys` answered so far are on enough replicas;
   * rejects when the wait failed (a timeout or a dead master): the caller must
   * then treat those writes as possibly lost.
   */
  after(keys: readonly string[]): Promise<void> {
    if (!this.pending) {
      const batch = new Set<string>();
      // setImmediate, not a microtask: the claims whose answers arrive in the
      // same I/O phase join this wait.
      const done = new Promise<void>((resolve, reject) => {
        setImmediate(() => {
          this.pending = undefined;
          this.wait([...batch]).then(resolve, reject);
        });
      });
      this.pending = { keys: batch, done };
    }
    for (const key of keys) this.pending.keys.add(key);
    return this.pending.done;
  }
}

/**
 * The replica wait a store write makes before it returns, when a later step
 * relies on that write surviving a failover (a Redis Cluster with
 * `redis.cluster.waitReplicas`; none on a single Redis, where a write is as
 * durable as it gets once answered). docs/protocol.md, "Replica waits on a
 * Redis Cluster", lists the writes that wait and why.
 */
export interface ReplicaWaits {
  /** The masters that own `keys` now, read before the write. */
  owners(keys: readonly string[]): string;
  /**
   * Resolves once the writes to `keys` answered so far are on a replica;
   * rejects (`ReplicaWaitError`) when they may be lost: the wait timed out, or
   * a slot changed master since `ownersBefore`.
   */
  after(keys: readonly string[], ownersBefore: string): Promise<void>;
}

/**
 * Replica waits on one connection, coalesced per event-loop turn (one `WAIT`
 * per master for every claim of the turn).
 * @param wait the replica wait for a set of keys on `redis` (`waitForReplicas` with the configured count and timeout).
 */
export function replicaWaits(redis: RedisClient, wait: (keys: readonly string[]) => Promise<void>): ReplicaWaits {
  const barrier = new ReplicaBarrier(wait);
  return {
    owners: (keys) => slotOwners(redis, keys),
    after: async (keys, ownersBefore) => {
      await barrier.after(keys);
      assertSlotOwners(redis, keys, ownersBefore);
    },
  };
}
