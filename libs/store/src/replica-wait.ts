import type { Redis } from 'ioredis';
import { SingleshotError } from '@singleshot/core';
import { isCluster, type RedisClient } from './connection';

/**
 * The writes cannot be shown to be on a replica (ingest answers 503; the
 * producer retries; a job fails and is retried): fewer replicas than required
 * acknowledged them in time (`timeout`), or a slot they went to changed master
 * between their sending and the wait (`master_changed`), so the `WAIT` would
 * ask a node that may not have carried them.
 */
export class ReplicaWaitError extends SingleshotError {
  constructor(
    readonly acknowledged: number,
    readonly required: number,
    readonly reason: 'timeout' | 'master_changed' = 'timeout',
  ) {
    super(
      reason === 'timeout'
        ? `only ${acknowledged} of ${required} replica(s) acknowledged the write in time`
        : 'the master of a written slot changed before its replica wait: the write may be lost with the former master',
      'REPLICA_WAIT_TIMEOUT',
    );
  }
}

// CRC16-CCITT (XMODEM), the hash Redis Cluster maps keys to slots with.
const CRC_TABLE = Array.from({ length: 256 }, (_, i) => {
  let crc = i << 8;
  for (let b = 0; b < 8; b++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  return crc;
});

/** The cluster hash slot of a key (its `{tag}` if it has a non-empty one). */
export function slotOf(key: string): number {
  const open = key.indexOf('{');
  let hashed = key;
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) hashed = key.slice(open + 1, close);
  }
  let crc = 0;
  for (const byte of Buffer.from(hashed)) crc = ((crc << 8) & 0xffff) ^ CRC_TABLE[((crc >> 8) ^ byte) & 0xff]!;
  return crc % 16384;
}

/**
 * The connection of the master serving each key's slot, with the number of
 * live replicas the slot map lists for it, deduplicated. `WAIT` has no key, so a
 * cluster client would send it to any node; it must go to the connection that
 * carried the writes, which is the pool's connection to that slot's master.
 */
function mastersFor(redis: RedisClient, keys: readonly string[]): { node: Redis; replicas: number }[] {
  if (!isCluster(redis)) return [{ node: redis, replicas: Number.POSITIVE_INFINITY }];
  const byKey = new Map(redis.nodes('master').map((n) => [`${n.options.host}:${n.options.port}`, n]));
  const found = new Map<Redis, number>();
  for (const key of keys) {
    const [nodeKey, ...replicas] = redis.slots[slotOf(key)] ?? [];
    const node = nodeKey ? byKey.get(nodeKey) : undefined;
    // Slot map in flux (a failover): WAIT on every master rather than skip one.
    if (!node) return [...byKey.values()].map((n) => ({ node: n, replicas: Number.POSITIVE_INFINITY }));
    found.set(node, replicas.length);
  }
  return [...found].map(([node, replicas]) => ({ node, replicas }));
}

/**
 * Which node the client would send each key's writes to now (its slot map),
 * as one string to compare later; empty on a single Redis. Taken before
 * writes and handed to `waitForReplicas`: a write sent to a master that was
 * then replaced (paused past the cluster's node timeout, its replica
 * promoted, the client's map reloaded) may still run on the old master when
 * it resumes, be answered, and be dropped once it turns replica; a `WAIT` on
 * the new master, which has no replica yet, would not notice.
 */
export function slotOwners(redis: RedisClient, keys: readonly string[]): string {
  if (!isCluster(redis)) return '';
  let owners = '';
  for (const key of keys) owners += `${redis.slots[slotOf(key)]?.[0] ?? '?'},`;
  return owners;
}

/**
 * Waits until `replicas` replicas of every master that holds one of `keys`
 * acknowledged the writes sent so far (Redis `WAIT`), so a master failover
 * after this returns cannot lose them. A master with fewer live replicas (a
 * promoted one whose old master has not come back) is waited on for the ones
 * it has: "a replica where replicas exist", so a cluster that lost a node keeps
 * accepting (a second failure before it heals could lose writes; see
 * docs/protocol.md). A no-op for `replicas` 0. Throws `ReplicaWaitError`
 * when `timeoutMs` passes first, or when `ownersBefore` (`slotOwners` of the
 * same keys, taken before the writes) no longer matches the slot map.
 */
export async function waitForReplicas(redis: RedisClient, keys: readonly string[], replicas: number, timeoutMs: number, ownersBefore?: string): Promise<void> {
  if (replicas <= 0) return;
  await Promise.all(
    mastersFor(redis, keys).map(async ({ node, replicas: available }) => {
      const required = Math.min(replicas, available);
      if (required === 0) return;
      const acknowledged = (await node.call('WAIT', required, timeoutMs)) as number;
      if (acknowledged < required) throw new ReplicaWaitError(acknowledged, required);
    }),
  );
  // Checked after the WAIT, so a map change at any moment up to here counts.
  if (ownersBefore !== undefined) assertSlotOwners(redis, keys, ownersBefore, replicas);
}

/**
 * Throws `ReplicaWaitError` (`master_changed`) when a slot of `keys` has
 * another master in the client's map than `ownersBefore` (`slotOwners`, taken
 * before the writes) says: no `WAIT` can then vouch for those writes.
 */
export function assertSlotOwners(redis: RedisClient, keys: readonly string[], ownersBefore: string, required = 1): void {
  if (slotOwners(redis, keys) !== ownersBefore) throw new ReplicaWaitError(0, required, 'master_changed');
}
