/** Default number of shards: keys of one operation share the `{sNN}` hash tag. */
export const DEFAULT_SHARDS = 16;

/** Shard of a hex key (operation or message key): first 8 hex digits mod N. */
export function shardOf(hexKey: string, shards: number = DEFAULT_SHARDS): number {
  const n = Number.parseInt(hexKey.slice(0, 8), 16);
  if (!Number.isFinite(n) || shards < 1) throw new RangeError(`cannot shard key "${hexKey}" over ${shards}`);
  return n % shards;
}

/** Redis Cluster hash tag of a shard, e.g. `{s07}`. */
export function shardTag(shard: number): string {
  return `{s${String(shard).padStart(2, '0')}}`;
}
