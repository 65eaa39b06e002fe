import { setTimeout as delay } from 'node:timers/promises';
import { CLUSTER_SLOTS_REFRESH_MS } from '@singleshot/store';
import { startFaultProxy, startTestRedisCluster, waitUntil, type ClusterNode, type FaultProxy } from '@singleshot/test-harness';
import type { ChaosStore, FaultContext } from './chaos-store';
import type { ServerFaultAction } from './fault-schedule';

const sleep = (ms: number, signal: AbortSignal) => delay(Math.max(0, ms), undefined, { signal }).catch(() => undefined);

/** How long a failover may take before the fault counts as not carried out. */
const FAILOVER_TIMEOUT_MS = 30_000;

export interface ClusterStoreOptions {
  /** `cluster-node-timeout`: a master silent for longer is failed over. */
  nodeTimeoutMs: number;
}

/**
 * The local Redis Cluster (3 masters + 3 replicas) with a fault proxy in front
 * of every node. The cluster announces its nodes' real ports; the fleet's
 * `redis.cluster.natMap` maps each to its proxy (and the seeds are the proxies),
 * so every connection of the fleet, redirections included, goes through the
 * proxy of the node it talks to: a link fault hits the apps' links to one
 * master and nothing else (the cluster bus and replication stay direct).
 *
 * The fleet runs the production shape of a cluster: 64 shards and partitions,
 * and every acceptance and fenced commit waits for one replica (`WAIT`), which
 * is what keeps an acknowledged write through a failover. AOF `everysec`: a
 * killed master's own data is not what survives it (its replica's is, and the
 * old master resyncs from it when it comes back).
 *
 * Server faults run one at a time, each healed before the next begins, and
 * healed for the clients too: the next waits until their slot maps reloaded
 * (CLUSTER_SLOTS_REFRESH_MS) and list the rejoined replica. A master with no
 * replica must not be the next victim: two failures on one shard before the
 * first is healed can lose writes by design (docs/protocol.md).
 * - `kill-master`: SIGKILL, wait for the replica's promotion, stay down
 *   `downMs`, restart (it rejoins as a replica and resyncs);
 * - `stop-master`: SIGSTOP past the node timeout, wait until its replica was
 *   promoted while it is paused, SIGCONT at `durationMs`; it learns the newer
 *   epoch, turns replica, drops what it took as a master after the pause.
 */
export async function startClusterStore(options: ClusterStoreOptions): Promise<ChaosStore> {
  const cluster = await startTestRedisCluster({ nodeTimeoutMs: options.nodeTimeoutMs, appendfsync: 'everysec' });
  const proxies = new Map<number, FaultProxy>();
  try {
    for (const node of cluster.nodes) proxies.set(node.port, await startFaultProxy({ host: '127.0.0.1', port: node.port }));
  } catch (err) {
    await Promise.allSettled([...proxies.values()].map((p) => p.close()));
    await cluster.destroy();
    throw err;
  }
  const proxyOf = (node: ClusterNode) => proxies.get(node.port) as FaultProxy;
  const natMap = Object.fromEntries(cluster.nodes.map((n) => [n.address, { host: '127.0.0.1', port: proxyOf(n).port }]));
  const topology = { keyPrefix: 'ss', shards: 64, partitions: 64 };
  const via = (seeds: string[]) => ({ nodes: seeds, waitReplicas: 1, waitTimeoutMs: 2000 });
  const proxySeeds = cluster.nodes.map((n) => `127.0.0.1:${proxyOf(n).port}`);

  /** The `pick`-th current master (mod their number), by port. */
  const master = async (pick: number): Promise<ClusterNode | undefined> => {
    const masters = (await cluster.masters()).sort((a, b) => a.port - b.port);
    return masters[pick % Math.max(1, masters.length)];
  };
  const name = (node: ClusterNode) => `master ${node.address} (proxy ${proxyOf(node).port})`;
  /** Waits for `victim`'s failover; names the master that took its slots (for the timeline). */
  const failover = async (victim: ClusterNode, before: readonly ClusterNode[]): Promise<string> => {
    await cluster.waitForPromotion(victim, FAILOVER_TIMEOUT_MS);
    const promoted = (await cluster.masters()).find((m) => !before.includes(m));
    return promoted ? promoted.address : 'its former replica';
  };

  const killMaster = async (action: Extract<ServerFaultAction, { kind: 'kill-master' }>, ctx: FaultContext) => {
    const before = await cluster.masters();
    const victim = await master(action.pick);
    if (!victim) return;
    await cluster.kill9(victim);
    ctx.count('kill-master');
    ctx.note(`SIGKILL ${name(victim)}`);
    const from = Date.now();
    const promoted = await failover(victim, before);
    ctx.note(`failover: ${victim.address}'s slots served by ${promoted} after ${Date.now() - from} ms; down another ${action.downMs} ms`);
    await sleep(action.downMs, ctx.healing);
    await cluster.restart(victim);
    ctx.note(`${victim.address} restarted, rejoined as a replica`);
  };

  const stopMaster = async (action: Extract<ServerFaultAction, { kind: 'stop-master' }>, ctx: FaultContext) => {
    const before = await cluster.masters();
    const victim = await master(action.pick);
    if (!victim) return;
    cluster.pause(victim);
    ctx.count('stop-master');
    ctx.note(`SIGSTOP ${name(victim)} for ${action.durationMs} ms (node timeout ${options.nodeTimeoutMs} ms)`);
    const from = Date.now();
    try {
      const promoted = await failover(victim, before);
      ctx.note(`failover while paused: ${victim.address}'s slots served by ${promoted} after ${Date.now() - from} ms`);
      await sleep(from + action.durationMs - Date.now(), ctx.healing);
    } finally {
      cluster.resume(victim);
      ctx.note(`SIGCONT ${victim.address}`);
    }
    await waitUntil(async () => (await cluster.role(victim)) === 'slave', `${victim.address} to turn replica after its pause`, { timeoutMs: 30_000, intervalMs: 200 });
    await cluster.waitHealthy();
    ctx.note(`${victim.address} resumed as a replica`);
  };

  let turn: Promise<void> = Promise.resolve();
  return {
    kind: 'cluster',
    fleetRedis: { url: `redis://${proxySeeds[0]}`, ...topology, cluster: { ...via(proxySeeds), natMap } },
    checkerRedis: { url: `redis://${cluster.seeds[0]}`, ...topology, checkOnStart: false, cluster: via(cluster.seeds) },
    linkLabel: 'redis-master',
    linkProxies: [...proxies.values()],
    linkProxy: async (pick) => {
      const node = (await master(pick).catch(() => undefined)) ?? (cluster.nodes[pick % cluster.nodes.length] as ClusterNode);
      return { proxy: proxyOf(node), name: name(node) };
    },
    serverFault: (action, ctx) => {
      const run = async () => {
        // Queued behind the previous one: the run may have healed meanwhile.
        if (ctx.healing.aborted) return;
        if (action.kind === 'kill-master') await killMaster(action, ctx);
        else if (action.kind === 'stop-master') await stopMaster(action, ctx);
        // Healed means healed for the clients too: their slot maps list the
        // rejoined replica (and so wait for it) only after their next reload.
        await sleep(CLUSTER_SLOTS_REFRESH_MS + 1000, ctx.healing);
      };
      const mine = turn.then(run);
      turn = mine.catch(() => undefined);
      return mine;
    },
    heal: async () => {
      await turn;
      for (const node of cluster.nodes) cluster.resume(node);
      for (const node of cluster.nodes) if (!node.alive) await cluster.restart(node);
      await cluster.waitHealthy();
    },
    close: async () => {
      await Promise.allSettled([...proxies.values()].map((p) => p.close()));
      await cluster.destroy();
    },
  };
}
