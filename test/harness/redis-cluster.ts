import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, waitUntil } from './free-port';

const run = promisify(execFile);

/** One node of a test cluster. */
export interface ClusterNode {
  readonly port: number;
  readonly address: string;
  readonly dir: string;
  /** True until killed. */
  readonly alive: boolean;
}

/**
 * A throwaway Redis Cluster for one suite: 3 masters + 3 replicas from
 * `redis-server --cluster-enabled yes` on free loopback ports (and free bus
 * ports, port + 10000), AOF on, `noeviction`, a short `cluster-node-timeout`
 * so a killed master's replica is promoted within seconds. Temp dirs; `destroy`
 * stops every node and deletes them.
 */
export interface TestRedisCluster {
  readonly nodes: readonly ClusterNode[];
  /** `host:port` of every node (the seed list for `redis.cluster.nodes`). */
  readonly seeds: string[];
  /** The current masters, from CLUSTER NODES of a live node. */
  masters(): Promise<ClusterNode[]>;
  /** SIGKILL one node. */
  kill9(node: ClusterNode): Promise<void>;
  /**
   * SIGSTOP one node: alive but silent, its clients' commands wait unanswered.
   * Paused past the node timeout, a master is failed over while it still runs.
   */
  pause(node: ClusterNode): void;
  /** SIGCONT a paused node; a failed-over master then learns the newer epoch and turns replica. */
  resume(node: ClusterNode): void;
  /** The role a node reports of itself (`ROLE`): `master` or `slave`. */
  role(node: ClusterNode): Promise<string>;
  /** Resolves once the cluster is ok and every master has an online replica (the next failover has one to promote). */
  waitHealthy(timeoutMs?: number): Promise<void>;
  /**
   * Starts a killed node again on its own dir (AOF and nodes.conf): it rejoins
   * the cluster as a replica of the master that replaced it. Resolves once every
   * master has a replica online again, so the next failover has one to promote.
   */
  restart(node: ClusterNode, timeoutMs?: number): Promise<void>;
  /** Waits until every slot is served by a live master again, none of them `killed` (killed or paused: its replica was promoted). */
  waitForPromotion(killed: ClusterNode, timeoutMs?: number): Promise<ClusterNode>;
  /** `redis-cli` against one node. */
  cli(node: ClusterNode, ...args: string[]): Promise<string>;
  destroy(): Promise<void>;
}

export interface TestRedisClusterOptions {
  /** Default 1000 ms: promotion takes about two of these. */
  nodeTimeoutMs?: number;
  appendfsync?: 'always' | 'everysec' | 'no';
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A free port whose cluster bus port (port + 10000) is free too. */
async function freeClusterPort(taken: Set<number>): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = await freePort();
    if (port > 55_000 || taken.has(port) || taken.has(port + 10_000)) continue;
    if (await canListen(port + 10_000)) return port;
  }
  throw new Error('no free port pair (port, port + 10000) on 127.0.0.1');
}

export async function startTestRedisCluster(options: TestRedisClusterOptions = {}): Promise<TestRedisCluster> {
  const root = mkdtempSync(join(tmpdir(), 'singleshot-cluster-'));
  const taken = new Set<number>();
  const procs = new Map<number, { child: ChildProcess; exited: Promise<void>; alive: boolean }>();
  const paused = new Set<number>();
  const nodes: (ClusterNode & { alive: boolean })[] = [];
  const cli = async (node: ClusterNode, ...args: string[]) => (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(node.port), ...args], { timeout: 30_000 })).stdout;

  const startNode = (port: number, dir: string) => {
    const child = spawn(
      'redis-server',
      [
        '--port', String(port),
        '--bind', '127.0.0.1',
        '--dir', dir,
        '--cluster-enabled', 'yes',
        '--cluster-config-file', join(dir, 'nodes.conf'),
        '--cluster-node-timeout', String(options.nodeTimeoutMs ?? 1000),
        '--appendonly', 'yes',
        '--appendfsync', options.appendfsync ?? 'everysec',
        '--save', '',
        '--maxmemory-policy', 'noeviction',
        '--daemonize', 'no',
        '--logfile', join(dir, 'redis.log'),
        '--loglevel', 'warning',
      ],
      { stdio: 'ignore' },
    );
    const entry = { child, exited: new Promise<void>((r) => child.once('exit', () => r())), alive: true };
    child.once('exit', () => (entry.alive = false));
    procs.set(port, entry);
  };

  const destroy = async () => {
    for (const p of procs.values()) {
      // SIGKILL ends a stopped process too; no SIGCONT needed.
      if (p.alive) p.child.kill('SIGKILL');
    }
    await Promise.all([...procs.values()].map((p) => p.exited));
    rmSync(root, { recursive: true, force: true });
  };

  try {
    for (let i = 0; i < 6; i++) {
      const port = await freeClusterPort(taken);
      taken.add(port).add(port + 10_000);
      const dir = join(root, String(port));
      mkdirSync(dir);
      startNode(port, dir);
      const node = {
        port,
        address: `127.0.0.1:${port}`,
        dir,
        get alive() {
          return procs.get(port)?.alive ?? false;
        },
      };
      nodes.push(node);
    }
    for (const node of nodes) await waitUntil(async () => (await cli(node, 'PING')).trim() === 'PONG', `cluster node ${node.port}`, { timeoutMs: 30_000 });
    await run('redis-cli', ['--cluster', 'create', ...nodes.map((n) => n.address), '--cluster-replicas', '1', '--cluster-yes'], { timeout: 60_000 });
    await waitUntil(async () => {
      for (const node of nodes) if (!(await cli(node, 'CLUSTER', 'INFO')).includes('cluster_state:ok')) return false;
      // Every replica attached and in sync, so the first WAIT can succeed.
      const masters = await mastersOf(nodes[0]!);
      for (const m of masters) {
        const info = await cli(nodes.find((n) => n.address === m)!, 'INFO', 'replication');
        if (!/connected_slaves:1/.test(info) || !/state=online/.test(info)) return false;
      }
      return true;
    }, 'the cluster to be ok with one replica per master', { timeoutMs: 60_000, intervalMs: 200 });
  } catch (err) {
    await destroy();
    throw err;
  }

  async function mastersOf(via: ClusterNode): Promise<string[]> {
    const text = await cli(via, 'CLUSTER', 'NODES');
    return text
      .split('\n')
      .map((line) => line.split(' '))
      .filter((f) => f[2]?.split(',').includes('master') && !f[2]?.includes('fail') && f.length > 8)
      .map((f) => f[1]!.split('@')[0]!);
  }
  /** Cluster ok, three masters, none paused, each with an online replica. */
  async function waitHealthy(timeoutMs: number, what: string): Promise<void> {
    await waitUntil(async () => {
      const via = liveNode();
      if (!(await cli(via, 'CLUSTER', 'INFO')).includes('cluster_state:ok')) return false;
      const masters = await mastersOf(via);
      if (masters.length < 3) return false;
      for (const m of masters) {
        const master = nodes.find((n) => n.address === m)!;
        if (paused.has(master.port)) return false;
        const info = await cli(master, 'INFO', 'replication');
        if (!/connected_slaves:1/.test(info) || !/state=online/.test(info)) return false;
      }
      return true;
    }, what, { timeoutMs, intervalMs: 200 });
  }

  // A paused node would not answer: ask a running one.
  const liveNode = () => {
    const node = nodes.find((n) => n.alive && !paused.has(n.port));
    if (!node) throw new Error('every cluster node is down');
    return node;
  };

  return {
    nodes,
    seeds: nodes.map((n) => n.address),
    masters: async () => (await mastersOf(liveNode())).map((a) => nodes.find((n) => n.address === a)!).filter(Boolean),
    kill9: async (node) => {
      const p = procs.get(node.port);
      if (p?.alive) {
        p.child.kill('SIGKILL');
        await p.exited;
      }
    },
    restart: async (node, timeoutMs = 60_000) => {
      if (procs.get(node.port)?.alive) throw new Error(`cluster node ${node.address} is still running`);
      startNode(node.port, node.dir);
      await waitUntil(async () => (await cli(node, 'PING').catch(() => '')).trim() === 'PONG', `cluster node ${node.port} to restart`, { timeoutMs });
      await waitHealthy(timeoutMs, `${node.address} to rejoin as a replica`);
    },
    pause: (node) => {
      const p = procs.get(node.port);
      if (!p?.alive) return;
      paused.add(node.port);
      p.child.kill('SIGSTOP');
    },
    resume: (node) => {
      paused.delete(node.port);
      const p = procs.get(node.port);
      if (p?.alive) p.child.kill('SIGCONT');
    },
    role: async (node) => (await cli(node, 'ROLE')).split('\n')[0]!.trim(),
    waitHealthy: (timeoutMs = 60_000) => waitHealthy(timeoutMs, 'every master to have an online replica'),
    waitForPromotion: async (killed, timeoutMs = 30_000) =>
      waitUntil(
        async () => {
          const via = liveNode();
          if (!(await cli(via, 'CLUSTER', 'INFO')).includes('cluster_state:ok')) return undefined;
          const masters = (await mastersOf(via)).filter((a) => a !== killed.address);
          // Slots covered by live masters only: 3 masters again, none of them the killed one.
          return masters.length >= 3 ? nodes.find((n) => n.address === masters.find((m) => !nodes.some((x) => x.address === m && !x.alive)))! : undefined;
        },
        `a replica of ${killed.address} to be promoted`,
        { timeoutMs, intervalMs: 200 },
      ),
    cli,
    destroy,
  };
}
