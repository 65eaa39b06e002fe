import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { readFileSync } from 'node:fs';
import { batchSocketWrites } from './write-batching';

/**
 * How a connection is used decides how it behaves while Redis is away:
 * - `worker`: BullMQ workers and blocking reads; waits for Redis forever
 *   (`maxRetriesPerRequest: null`, as BullMQ requires).
 * - `producer`: the ingest path; fails fast while disconnected so the HTTP
 *   caller gets a 503 instead of a hanging request (never a 2xx).
 * - `client`: everything else (state scripts, admin reads); commands queue while
 *   reconnecting, so a short Redis restart delays a commit instead of losing it.
 */
export type ConnectionRole = 'worker' | 'producer' | 'client';

/** A connection to one Redis or to a Redis Cluster; every store and queue takes either. */
export type RedisClient = Redis | Cluster;

export interface RedisConnectionOptions {
  /** `redis://` or `rediss://` URL of a single Redis; ignored when `clusterNodes` is given. */
  url: string;
  role: ConnectionRole;
  /** Seed nodes (`host:port`) of a Redis Cluster; non-empty = connect to the cluster. */
  clusterNodes?: readonly string[];
  /** Address translation for a cluster behind NAT or in containers: announced `host:port` → reachable one. */
  natMap?: Readonly<Record<string, { host: string; port: number }>>;
  /** Connection name shown in CLIENT LIST. */
  name?: string;
  password?: string;
  tls?: { rejectUnauthorized?: boolean; ca?: string; caFile?: string };
}

/** True when the connection is a Redis Cluster client. */
export function isCluster(redis: RedisClient): redis is Cluster {
  return (redis as { isCluster?: boolean }).isCluster === true;
}

// Reconnect quickly at first, then every 2 s at most.
const backoff = (times: number) => Math.min(50 * 2 ** Math.min(times, 6), 2000);

function roleOptions(role: ConnectionRole): RedisOptions {
  switch (role) {
    case 'worker':
      return { maxRetriesPerRequest: null, enableReadyCheck: true };
    // No auto-pipelining: the chaos suite crashed an ingest process with it
    // (ioredis 5.11 autoPipelining.js throws "results[i] is not iterable" from a
    // callback when a pipeline fails as the connection drops), for a modest
    // throughput gain. Robustness first.
    case 'producer':
      return { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 3000 };
    case 'client':
      return { maxRetriesPerRequest: null };
  }
}

function tlsOptions(options: RedisConnectionOptions, forced: boolean): RedisOptions['tls'] {
  if (!forced && !options.tls) return undefined;
  const ca = options.tls?.ca ?? (options.tls?.caFile ? readFileSync(options.tls.caFile, 'utf8') : undefined);
  return { rejectUnauthorized: options.tls?.rejectUnauthorized ?? true, ...(ca ? { ca } : {}) };
}

/** Parses `host:port` (IPv6 as `[::1]:7000`); throws a TypeError naming the bad entry. */
export function parseNode(node: string): { host: string; port: number } {
  const match = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(node.trim());
  const port = Number(match?.[2]);
  if (!match?.[1] || !(port > 0 && port < 65536)) throw new TypeError(`cluster node "${node}" is not host:port`);
  return { host: match[1], port };
}

/**
 * The one Redis connection factory: a `Cluster` when cluster nodes are given,
 * else a `Redis` from the URL (TLS for `rediss://` or `tls`, password).
 */
export function createRedis(options: RedisConnectionOptions): RedisClient {
  const client = options.clusterNodes?.length ? createCluster(options) : createSingle(options);
  // ioredis emits 'error' on every failed reconnect; without a listener node
  // would print an unhandled-error warning per attempt. Callers log state changes.
  client.on('error', () => undefined);
  return client;
}

function createSingle(options: RedisConnectionOptions): Redis {
  const url = new URL(options.url);
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new TypeError(`REDIS_URL must start with redis:// or rediss:// (got ${url.protocol}//)`);
  }
  const base: RedisOptions = { connectionName: options.name, retryStrategy: backoff, lazyConnect: false, ...roleOptions(options.role) };
  if (options.password) base.password = options.password;
  const tls = tlsOptions(options, url.protocol === 'rediss:');
  if (tls) base.tls = tls;
  const redis = new Redis(options.url, base);
  // Only on a single Redis: a cluster client's node connections are its own.
  batchSocketWrites(redis);
  return redis;
}

/**
 * How often a cluster client reloads its slot map (CLUSTER SLOTS) on its own.
 * ioredis 5 reloads it only on a redirection or a lost node unless told to,
 * and `waitForReplicas` waits for the replicas that map lists: after a
 * failover the promoted master is listed without a replica, and when the old
 * master rejoins as its replica nothing redirects, so the client kept skipping
 * `WAIT` for those slots for good, and a later failover of that master lost
 * acknowledged writes (test/cluster/replica-rejoin.test.ts). With a periodic
 * reload the rejoined replica is waited for again within this long.
 */
export const CLUSTER_SLOTS_REFRESH_MS = 5000;

function createCluster(options: RedisConnectionOptions): Cluster {
  const { enableOfflineQueue, ...perNode } = roleOptions(options.role);
  const redisOptions: NonNullable<ClusterOptions['redisOptions']> = { connectionName: options.name, ...perNode };
  if (options.password) redisOptions.password = options.password;
  const tls = tlsOptions(options, false);
  if (tls) redisOptions.tls = tls;
  const clusterOptions: ClusterOptions = {
    redisOptions,
    clusterRetryStrategy: backoff,
    // A failover answers MOVED / CLUSTERDOWN for a few seconds: keep retrying
    // (queued commands wait) instead of failing the caller on the first redirect.
    maxRedirections: 64,
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 300,
    slotsRefreshTimeout: 2000,
    slotsRefreshInterval: CLUSTER_SLOTS_REFRESH_MS,
    // Managed clusters with TLS announce names the certificate is issued for.
    ...(tls ? { dnsLookup: (address: string, callback: (err: null, address: string) => void) => callback(null, address) } : {}),
    ...(options.natMap ? { natMap: { ...options.natMap } } : {}),
    ...(enableOfflineQueue === false ? { enableOfflineQueue: false } : {}),
  };
  return new Cluster(options.clusterNodes!.map(parseNode), clusterOptions);
}

/** The masters of a cluster (after it has connected), or the one Redis itself. */
export function mastersOf(redis: RedisClient): Redis[] {
  return isCluster(redis) ? redis.nodes('master') : [redis];
}
