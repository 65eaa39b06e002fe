import { randomBytes } from 'node:crypto';
import { drive, type DriverResult, type Workload } from './driver';
import { childPids, cpuSecondsOf, cpuSecondsOfTree, peakRssMb, peakRssOfTreeMb, syscallsOfTree } from '@singleshot/loadkit';
import { startSink } from './sink';
import { bullmqJobTimes, commandTotals, dropCompletedJobs, postgresSize, redisResetStats, redisSnapshot, scrape, topCommands, watchAof } from './store-stats';
import { quantiles, round } from './stats';
import { startSystem, type SystemId } from './systems';
import { monitorRedis, type RedisBreakdown } from './redis-monitor';
import { fillStore, type RetainedFill } from './retained-fill';

/** One run of one system: everything the bench tables show. */
export interface Measurement {
  system: SystemId;
  mode: 'saturated' | 'open-loop';
  /** Open loop: the notifications/s offered. */
  offeredPerSecond?: number;
  events: number;
  expected: number;
  notifications: number;
  duplicates: number;
  lost: number;
  requests: number;
  retriedRequests: number;
  failedRequests: number;
  seconds: number;
  perSecond: number;
  latencyMs: { p50: number; p95: number; p99: number; max: number };
  /** First copy sent → its first 2xx answer: the ingest (and driver) share of `latencyMs`. */
  ackMs: { p50: number; p95: number; p99: number; max: number };
  /**
   * Open loop: the latency of the notifications whose event was sent in each
   * second of the run (the lead-in's seconds first), so a tail can be told
   * apart as steady, a warm-up or a periodic stall.
   */
  latencyBySecond?: { second: number; n: number; p50: number; p95: number; max: number; ackP95: number }[];
  /** Open loop on Redis: the seconds of the run (as in latencyBySecond) during which an AOF rewrite was in progress. */
  rewriteSeconds?: number[];
  cpuMsPerNotification: { fleet: number; store: number; harness: number; system: number; byProcess: Record<string, number> };
  peakRssMb: { fleet: number; store: number };
  /** Read + write syscalls per notification (/proc/PID/io) of the fleet and of the store. */
  syscallsPerNotification: { fleet: number; store: number };
  redis?: {
    commandsPerNotification: number;
    scriptCallsPerNotification: number;
    top: Record<string, number>;
    /** used_memory delta ÷ operations right after the run (completed jobs still retained, at most 10,000 per queue). */
    bytesPerOperation: number;
    /** The same once the completed jobs are gone (their retention expired): what the dedup and audit records cost. */
    bytesPerOperationWithoutJobs: number;
    /** Bytes appended to the AOF per notification during the run (store-stats.ts watchAof): what each rewrite threshold is reached by. */
    aofBytesPerNotification: number;
    /** Forks (AOF rewrites) during the run, and Redis's latency monitor: event → worst ms (≥ 10 ms only). */
    forks: number;
    latencyMaxMs: Record<string, number>;
  };
  postgres?: { bytesPerOperation: number };
  /** singleshot: where a notification waited, from BullMQ's job timestamps and the apps' metrics. */
  /** A profile round only (`--profile`): what MONITOR saw, per notification. */
  monitor?: RedisBreakdown;
  /** A profile round only: the measured run's span on the monotonic clock (µs, as CPU profiles count), and each fleet pid's role. */
  profileWindow?: { fromUs: number; toUs: number; roles: Record<string, string> };
  /** The run began on a store already holding this many retained operations (`--retained`). */
  retained?: RetainedFill;
  stages?: {
    decideQueueWaitMs: ReturnType<typeof quantiles>;
    decideRunMs: ReturnType<typeof quantiles>;
    deliverQueueWaitMs: ReturnType<typeof quantiles>;
    deliverRunMs: ReturnType<typeof quantiles>;
    deliverRetriedJobs: number;
    lockConflicts: number;
    eventLoopLagMs: { p99: number; max: number };
  };
}

/**
 * Latency quantiles of the notifications grouped by the second of the run
 * their event was sent in, with the p95 of ingest's first answer to those events.
 */
function bySecond(ours: { firstAt: number; event: string }[], driven: DriverResult): NonNullable<Measurement['latencyBySecond']> {
  const second = (sent: number) => Math.floor((sent - driven.startedAt) / 1000);
  const groups: number[][] = [];
  const acks: number[][] = [];
  for (const v of ours) {
    const sent = driven.firstSent.get(v.event);
    if (sent !== undefined) (groups[second(sent)] ??= []).push(v.firstAt - sent);
  }
  for (const [id, at] of driven.firstAnswered) {
    const sent = driven.firstSent.get(id);
    if (sent !== undefined) (acks[second(sent)] ??= []).push(at - sent);
  }
  return groups.flatMap((g, i) => {
    if (!g) return [];
    const q = quantiles(g);
    return [{ second: i, n: g.length, p50: q.p50, p95: q.p95, max: q.max, ackP95: quantiles(acks[i] ?? []).p95 }];
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts a fresh store and the system, warms it with a few events, resets the
 * counters, drives the workload (saturated, or open loop at `eventsPerSecond`),
 * waits for the sink to see every (event, recipient) pair and measures.
 */
export async function measure(
  system: SystemId,
  w: Workload,
  opts: { concurrency: number; appendfsync: 'everysec' | 'always'; aofRewrite?: boolean; drainSeconds: number; eventsPerSecond?: number; warmSeconds?: number; processes?: number; nodeArgs?: readonly string[]; monitor?: boolean; retained?: number },
): Promise<Measurement> {
  const sink = await startSink();
  const sys = await startSystem(system, { sinkPort: sink.port, concurrency: opts.concurrency, appendfsync: opts.appendfsync, aofRewrite: opts.aofRewrite, ...(opts.processes ? { processes: opts.processes } : {}), ...(opts.nodeArgs ? { nodeArgs: opts.nodeArgs } : {}) });
  try {
    const pairsOf = (prefix: string) => {
      let n = 0;
      for (const v of sink.received.values()) if (v.event.startsWith(prefix)) n++;
      return n;
    };
    const waitPairs = async (prefix: string, want: number, seconds: number) => {
      const deadline = Date.now() + seconds * 1000;
      while (pairsOf(prefix) < want && Date.now() < deadline) await sleep(50);
    };
    // Warm-up: connections, JIT, scripts loaded; not counted.
    const warm = { ...w, events: Math.min(200, w.events) };
    const warmRun = `w${randomBytes(3).toString('hex')}`;
    await drive(sys.ingestUrl, warmRun, warm);
    await waitPairs(`b-${warmRun}-`, warm.events * w.recipients, 60);
    await sleep(500);

    const redis = sys.store.kind === 'redis';
    // A store that already holds this many operations (singleshot's own records, copied from the warm-up's).
    const retained = redis && opts.retained && system.startsWith('singleshot') ? await fillStore(sys.store.url, opts.retained) : undefined;
    if (redis) {
      // The warm-up's jobs would otherwise count against this run's memory figure once dropped.
      await dropCompletedJobs(sys.store.url);
      await redisResetStats(sys.store.url);
    }
    const before = {
      redis: redis ? await redisSnapshot(sys.store.url) : undefined,
      pgBytes: redis ? 0 : await postgresSize(sys.store.url),
      cpu: sys.fleet.map((p) => cpuSecondsOfTree(p.pid)),
      store: redis ? cpuSecondsOf(sys.store.pid) : cpuSecondsOfTree(sys.store.pid),
      self: process.cpuUsage(),
      sys: { fleet: sys.fleet.reduce((t, p) => t + syscallsOfTree(p.pid), 0), store: syscallsOfTree(sys.store.pid) },
    };
    await scrape(sys.metricsUrls); // resets prom-client's event-loop histogram

    const run = randomBytes(4).toString('hex');
    const prefix = `b-${run}-`;
    // Open loop measures the steady state at its rate: the run starts with a
    // lead-in of `warmSeconds` at the same rate whose events are delivered and
    // checked (duplicates, lost) but not in the latency figures. A system fresh
    // from the closed-loop warm-up, or paused before the run, shows its first
    // seconds' p95 at several times the rest (see latencyBySecond).
    const lead = opts.eventsPerSecond && opts.warmSeconds ? Math.round(opts.eventsPerSecond * opts.warmSeconds) : 0;
    const expected = (w.events + lead) * w.recipients;
    const aof = redis ? watchAof(sys.store.url) : undefined;
    // A profile round's breakdown of the Redis work (MONITOR slows Redis: never a speed figure).
    const monitor = redis && opts.monitor ? await monitorRedis(sys.store.url) : undefined;
    const fromUs = Number(process.hrtime.bigint() / 1000n);
    const driven = await drive(sys.ingestUrl, run, { ...w, events: w.events + lead }, opts.eventsPerSecond ? { eventsPerSecond: opts.eventsPerSecond } : undefined);
    await waitPairs(prefix, expected, opts.drainSeconds);
    const reachedAt = performance.now();
    const toUs = Number(process.hrtime.bigint() / 1000n);
    // A little longer, so a late duplicate is still seen and jobs finish.
    await sleep(1500);
    const aofSeen = aof ? await aof.stop() : { rewritingAt: [], bytesAppended: 0 };
    const monitored = monitor ? await monitor.stop(Math.max(1, [...sink.received.values()].filter((v) => v.event.startsWith(prefix)).length)) : undefined;

    const cpuAfter = sys.fleet.map((p) => cpuSecondsOfTree(p.pid));
    const storeAfter = redis ? cpuSecondsOf(sys.store.pid) : cpuSecondsOfTree(sys.store.pid);
    const self = process.cpuUsage(before.self);
    const sysAfter = { fleet: sys.fleet.reduce((t, p) => t + syscallsOfTree(p.pid), 0), store: syscallsOfTree(sys.store.pid) };
    const metrics = await scrape(sys.metricsUrls);

    const ours = [...sink.received.values()].filter((v) => v.event.startsWith(prefix));
    const lastAt = ours.reduce((m, v) => Math.max(m, v.firstAt), driven.startedAt);
    const seconds = (Math.min(lastAt, reachedAt) - driven.startedAt) / 1000;
    const counted = (event: string) => lead === 0 || Number(event.slice(prefix.length)) >= lead;
    const measured = lead === 0 ? ours : ours.filter((v) => counted(v.event));
    const latencies = measured.map((v) => v.firstAt - (driven.firstSent.get(v.event) ?? v.firstAt));
    const acks = [...driven.firstAnswered].filter(([id]) => counted(id)).map(([id, at]) => at - (driven.firstSent.get(id) ?? at));
    const n = Math.max(1, ours.length);
    const byProcess: Record<string, number> = {};
    sys.fleet.forEach((p, i) => (byProcess[p.role] = round((((cpuAfter[i] ?? 0) - (before.cpu[i] ?? 0)) * 1000) / n)));
    const fleetMs = Object.values(byProcess).reduce((a, b) => a + b, 0);
    const storeMs = ((storeAfter - before.store) * 1000) / n;
    const m: Measurement = {
      system,
      mode: opts.eventsPerSecond ? 'open-loop' : 'saturated',
      ...(opts.eventsPerSecond ? { offeredPerSecond: opts.eventsPerSecond * w.recipients } : {}),
      events: w.events + lead,
      expected,
      notifications: ours.length,
      duplicates: ours.reduce((s, v) => s + v.count - 1, 0),
      lost: expected - ours.length,
      requests: driven.requests,
      retriedRequests: driven.retried,
      failedRequests: driven.failed,
      seconds: round(seconds),
      perSecond: round(ours.length / Math.max(0.001, seconds), 0),
      latencyMs: quantiles(latencies),
      ackMs: quantiles(acks),
      ...(opts.eventsPerSecond ? { latencyBySecond: bySecond(ours, driven) } : {}),
      ...(retained ? { retained } : {}),
      ...(aof && opts.eventsPerSecond ? { rewriteSeconds: [...new Set(aofSeen.rewritingAt.map((t) => Math.floor((t - driven.startedAt) / 1000)))].filter((sec) => sec >= 0) } : {}),
      cpuMsPerNotification: { fleet: round(fleetMs), store: round(storeMs), harness: round((self.user + self.system) / 1000 / n), system: round(fleetMs + storeMs), byProcess },
      syscallsPerNotification: { fleet: round((sysAfter.fleet - before.sys.fleet) / n, 1), store: round((sysAfter.store - before.sys.store) / n, 1) },
      peakRssMb: {
        fleet: round(sys.fleet.reduce((s, p) => s + peakRssOfTreeMb(p.pid), 0), 0),
        store: round(peakRssMb(sys.store.pid), 0),
      },
    };
    if (monitored) {
      m.monitor = monitored;
      // `start` forks its app processes: every pid below a fleet process has its role.
      const roles: Record<string, string> = {};
      const mark = (pid: number, role: string) => {
        roles[pid] = role;
        for (const child of childPids(pid)) mark(child, role);
      };
      for (const p of sys.fleet) mark(p.pid, p.role);
      m.profileWindow = { fromUs, toUs, roles };
    }
    if (redis && before.redis) {
      const after = await redisSnapshot(sys.store.url);
      const { commands: total, scripts } = commandTotals(after);
      const top = topCommands(after, n);
      m.redis = { commandsPerNotification: round(total / n, 1), scriptCallsPerNotification: round(scripts / n, 2), top, bytesPerOperation: round((after.usedMemory - before.redis.usedMemory) / n, 0), bytesPerOperationWithoutJobs: Number.NaN, aofBytesPerNotification: round(aofSeen.bytesAppended / n, 0), forks: after.forks - before.redis.forks, latencyMaxMs: after.latencyMaxMs };
    } else {
      m.postgres = { bytesPerOperation: round(((await postgresSize(sys.store.url)) - before.pgBytes) / n, 0) };
    }
    if (system.startsWith('singleshot')) {
      const decide = await bullmqJobTimes(sys.store.url, '{ssq}', 'decide', 20_000);
      const deliver = await bullmqJobTimes(sys.store.url, '{ssq}', 'deliver', 20_000);
      m.stages = {
        decideQueueWaitMs: quantiles(decide.wait),
        decideRunMs: quantiles(decide.run),
        deliverQueueWaitMs: quantiles(deliver.wait),
        deliverRunMs: quantiles(deliver.run),
        deliverRetriedJobs: deliver.attempts.filter((a) => a > 1).length,
        lockConflicts: metrics.get('singleshot_lock_conflicts_total') ?? 0,
        eventLoopLagMs: { p99: round((metrics.get('nodejs_eventloop_lag_p99_seconds') ?? 0) * 1000, 1), max: round((metrics.get('nodejs_eventloop_lag_max_seconds') ?? 0) * 1000, 1) },
      };
    }
    if (m.redis) {
      await dropCompletedJobs(sys.store.url);
      m.redis.bytesPerOperationWithoutJobs = round(((await redisSnapshot(sys.store.url)).usedMemory - (before.redis?.usedMemory ?? 0)) / n, 0);
    }
    return m;
  } finally {
    await sys.stop();
    await sink.close();
  }
}
