import { prng, type Prng } from './prng';

export const PROXY_FAULTS = ['latency', 'reset', 'blackhole', 'half-open'] as const;
export type ProxyFaultKind = (typeof PROXY_FAULTS)[number];
export type ProxyPath = 'redis' | 'provider';

/** One fault of the timeline; `atMs` counts from the run's start. */
export type FaultAction =
  /** SIGKILL a member (by index), start it again after `restartAfterMs`. */
  | { kind: 'kill-worker'; atMs: number; target: number; restartAfterMs: number }
  /** SIGSTOP the delivery process holding an operation's lock (else delivery member `fallback`) for `durationMs` > lease, then SIGCONT. */
  | { kind: 'stop-holder'; atMs: number; durationMs: number; fallback: number }
  /** SIGKILL Redis, start it again on its AOF after `downMs`. */
  | { kind: 'kill-redis'; atMs: number; downMs: number }
  /** On a cluster: SIGKILL the master `pick` (mod the masters, by port), start it again `downMs` after its replica took over. */
  | { kind: 'kill-master'; atMs: number; pick: number; downMs: number }
  /** On a cluster: SIGSTOP the master `pick` for `durationMs` (past the node timeout: it is failed over while alive), then SIGCONT. */
  | { kind: 'stop-master'; atMs: number; pick: number; durationMs: number }
  /**
   * A proxy fault on one path for `durationMs` (0 for a reset); `delayMs` for
   * latency. On a cluster the Redis path is the link to one master: `pick`
   * (mod the masters, by port) chooses it when the fault fires.
   */
  | { kind: 'proxy'; atMs: number; path: ProxyPath; fault: ProxyFaultKind; durationMs: number; delayMs: number; pick: number };

/** The faults of the Redis servers themselves, carried out by the run's store (single Redis or cluster). */
export type ServerFaultAction = Extract<FaultAction, { kind: 'kill-redis' | 'kill-master' | 'stop-master' }>;

export interface FaultSchedule {
  actions: FaultAction[];
  /** Faults happen in [0, windowMs); at windowMs everything is healed. */
  windowMs: number;
}

export interface FaultPlanOptions {
  seed: string;
  windowMs: number;
  /** Apps of the fleet's members, by member index. */
  members: readonly string[];
  leaseMs: number;
  /** Plan for a Redis Cluster with this `cluster-node-timeout`: master faults instead of Redis kills. */
  clusterNodeTimeoutMs?: number;
}

/** `count` times in [from, to), one in each equal slice, so faults spread over the window. */
function spread(rng: Prng, count: number, from: number, to: number): number[] {
  const slice = Math.max(0, to - from) / Math.max(1, count);
  return Array.from({ length: count }, (_, k) => Math.round(from + (k + rng.next()) * slice));
}

/**
 * The fault timeline of a run, entirely from the seed and the window length:
 * - a SIGKILL of a random member every 2–10 s, restarted 0.2–1.5 s later;
 * - a SIGSTOP of a lock holder for 1.5–2.5 leases, about one per 20 s (at least one);
 * - a SIGKILL of Redis, down 0.3–2 s, about one per 30 s (at least one);
 * - proxy faults on the Redis and the provider paths, every kind on each path
 *   at least once and one every ~5 s in all: latency 5–80 ms for 1–4 s, a reset,
 *   a blackhole or a half-open link for 0.5–3 s.
 * On a cluster the Redis kills are replaced by master faults, one at a time
 * and at least 12 s apart, alternating: a SIGKILL of a master (restarted
 * 0.3–2 s after its replica took over) and a SIGSTOP of a master for 3–5 node
 * timeouts (failed over while paused, then it resumes and turns replica); at
 * least one of each. The Redis link faults then hit the link to one master.
 * Cluster-only choices come from their own random stream, so a seed's single
 * Redis timeline is the same as before clusters were planned for.
 * Which process holds a lock at that moment, and what each fault hits, depends
 * on OS scheduling: the timeline is reproducible, its victims are not.
 */
export function planFaults(options: FaultPlanOptions): FaultSchedule {
  const rng = prng(options.seed, 'faults');
  const clusterRng = prng(options.seed, 'cluster-faults');
  const onCluster = options.clusterNodeTimeoutMs !== undefined;
  const { windowMs, leaseMs } = options;
  const actions: FaultAction[] = [];
  const deliveries = options.members.map((app, i) => (app === 'delivery' ? i : -1)).filter((i) => i >= 0);

  for (let t = rng.int(2000, 10_000); t < windowMs; t += rng.int(2000, 10_000)) {
    actions.push({ kind: 'kill-worker', atMs: t, target: rng.int(0, options.members.length - 1), restartAfterMs: rng.int(200, 1500) });
  }

  const stops = Math.max(1, Math.round(windowMs / 20_000));
  for (const atMs of spread(rng, stops, 1000, Math.max(1500, windowMs - 2.5 * leaseMs))) {
    actions.push({ kind: 'stop-holder', atMs, durationMs: Math.round(leaseMs * rng.between(1.5, 2.5)), fallback: rng.pick(deliveries) });
  }

  const redisKills = Math.max(1, Math.round(windowMs / 30_000));
  for (const atMs of spread(rng, redisKills, 2000, Math.max(2500, windowMs - 2000))) {
    const downMs = rng.int(300, 2000);
    if (!onCluster) actions.push({ kind: 'kill-redis', atMs, downMs });
  }
  if (onCluster) actions.push(...planMasterFaults(clusterRng, windowMs, options.clusterNodeTimeoutMs ?? 1000));

  const kinds: Array<[ProxyPath, ProxyFaultKind]> = [];
  for (const path of ['redis', 'provider'] as const) for (const fault of PROXY_FAULTS) kinds.push([path, fault]);
  const extra = Math.max(0, Math.round(windowMs / 5000) - kinds.length);
  for (let i = 0; i < extra; i++) kinds.push([rng.pick(['redis', 'provider'] as const), rng.pick(PROXY_FAULTS)]);
  const order = rng.shuffle(kinds);
  const times = spread(rng, order.length, 1000, Math.max(1500, windowMs - 1000));
  order.forEach(([path, fault], i) => {
    const durationMs = fault === 'reset' ? 0 : fault === 'latency' ? rng.int(1000, 4000) : rng.int(500, 3000);
    const delayMs = fault === 'latency' ? rng.int(5, 80) : 0;
    actions.push({ kind: 'proxy', atMs: times[i] as number, path, fault, durationMs, delayMs, pick: onCluster ? clusterRng.int(0, 1000) : 0 });
  });

  actions.sort((a, b) => a.atMs - b.atMs);
  return { actions, windowMs };
}

/** Master faults of a cluster run: alternating kinds (the first one seeded), at least one of each, spaced so each can heal first. */
function planMasterFaults(rng: Prng, windowMs: number, nodeTimeoutMs: number): FaultAction[] {
  const count = Math.max(2, Math.floor((windowMs - 12_000) / 12_000));
  const first = rng.chance(0.5) ? 'kill-master' : 'stop-master';
  return spread(rng, count, 2000, Math.max(3000, windowMs - 10_000)).map((atMs, i) => {
    const pick = rng.int(0, 1000);
    return (i % 2 === 0) === (first === 'kill-master')
      ? { kind: 'kill-master', atMs, pick, downMs: rng.int(300, 2000) }
      : { kind: 'stop-master', atMs, pick, durationMs: Math.round(nodeTimeoutMs * rng.between(3, 5)) };
  });
}
