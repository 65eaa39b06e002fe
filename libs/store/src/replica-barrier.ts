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

  /** @param wait the replica wait for a set of keys (`waitForReplicas` on the connection that wrote them). */
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
 * The replica wait a write makes before it returns, when a later step relies
 * on that write surviving a failover (a Redis Cluster with
 * `redis.cluster.waitReplicas`; none on a single Redis, where a write is as
 * durable as it gets once answered, and a writer given no `ReplicaWaits`
 * waits for nothing). One per connection: `WAIT` vouches only for the writes
 * of the connection it is sent on. docs/protocol.md, "Replica waits on a
 * Redis Cluster", lists the writes that wait and why.
 */
export interface ReplicaWaits {
  /** The masters that own `keys` now, read before the write. */
  owners(keys: readonly string[]): string;
  /**
   * Resolves once the writes to `keys` answered so far are on a replica;
   * rejects (`ReplicaWaitError`) when they may be lost: the wait timed out, or
   * a slot changed master since `ownersBefore` (not checked without it: for
   * writes whose keys are known only once they are done).
   */
  after(keys: readonly string[], ownersBefore?: string): Promise<void>;
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
      if (ownersBefore !== undefined) assertSlotOwners(redis, keys, ownersBefore);
    },
  };
}

/**
 * Replica waits on one connection, one `WAIT` per call: for writes that end a
 * step each on their own (an acceptance, a job's completion, a cancel).
 * @param wait the replica wait for a set of keys on `redis`, checking `ownersBefore` after it (`waitForReplicas`).
 */
export function replicaWaitsEach(redis: RedisClient, wait: (keys: readonly string[], ownersBefore?: string) => Promise<void>): ReplicaWaits {
  return { owners: (keys) => slotOwners(redis, keys), after: wait };
}

/**
 * Runs `write` so that it returns only once on a replica: the owners of
 * `keys` read before it, the wait after it. Without `replicas` (a single
 * Redis) it is `write` alone: `keys` is not even built.
 */
export async function writeReplicated<T>(replicas: ReplicaWaits | undefined, keys: () => readonly string[], write: () => Promise<T>): Promise<T> {
  if (!replicas) return write();
  const written = keys();
  const before = replicas.owners(written);
  const result = await write();
  await replicas.after(written, before);
  return result;
}
