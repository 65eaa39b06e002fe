import { setMaxListeners } from 'node:events';
import { mkdirSync } from 'node:fs';
import { eventMessageKey } from '@singleshot/core';
import type { Runtime } from '@singleshot/runtime';
import { freePort, startFaultProxy, waitForQueuesIdle, waitUntil, writeConfigFile, type FaultProxy } from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';
import { CHAOS_DELIVERY, TERMINAL_BOUND_MS, chaosConfig } from './chaos-config';
import { startChaosSink, type ChaosSink, type SinkFaultCounts } from './chaos-sink';
import type { ChaosStore } from './chaos-store';
import { startClusterStore } from './cluster-store';
import { startSingleStore } from './single-store';
import { checkRun, type CheckReport, type ProviderAcceptance } from './checker';
import { drive, type DriverStats } from './driver';
import { planFaults } from './fault-schedule';
import { gatherEvidence } from './evidence';
import { ChaosFleet } from './fleet';
import { Nemesis, type FaultCounts } from './nemesis';
import { countNotTerminal, lockHolderPids, readStates, scanJournal } from './redis-reads';
import { CHAOS_SOURCE, expectedOperations, isRejectedRecipient, planWorkload, type ExpectedOperation } from './workload';

export interface ChaosOptions {
  events: number;
  seed: string;
  /**
   * Run on a local Redis Cluster (3 masters + 3 replicas) instead of one
   * Redis: master SIGKILLs and SIGSTOPs (failovers) replace the Redis kills,
   * and the Redis link faults hit the apps' links to one master.
   */
  cluster?: boolean;
  /** New events per second (default 20): with the 3–5 sends each, the arrival rate is ~4× that. */
  ratePerSecond?: number;
  /** Latest a later send of an event comes after its first (default 30 s). */
  lateMs?: number;
  /** Share of events naming a recipient the provider rejects (default 0.05). */
  rejectRatio?: number;
  /** Chance that a key's first POST misbehaves at the provider (default 0.2). */
  sinkFaultRate?: number;
  /** Stop everything after this long and report what is not terminal (default: no limit beyond the bound). */
  durationLimitMs?: number;
  /** Producer sends in flight at once (default 64). */
  maxInFlight?: number;
  /** Ends the run early as the duration limit does (a signal to the process): the fleet and Redis are still stopped. */
  stop?: AbortSignal;
  /** Keep every member's warnings, errors and stderr in `<logDir>/<member>.log`. */
  logDir?: string;
  /** Progress lines (phases, not per-event). */
  log?: (line: string) => void;
}

export interface ChaosResult {
  seed: string;
  store: 'single' | 'cluster';
  events: number;
  sends: number;
  driver: Omit<DriverStats, 'acknowledged' | 'attempted'> & { acknowledged: number };
  faults: FaultCounts;
  sinkFaults: SinkFaultCounts;
  providerPosts: number;
  providerLookups: number;
  journal: Record<string, number>;
  /** In-doubt outcomes by error code. */
  inDoubt: Record<string, number>;
  check: CheckReport;
  boundMs: number;
  faultWindowMs: number;
  /** Operations terminal per second while faults ran; arrivals per second over the same window. */
  throughput: { terminalPerSecond: number; arrivalsPerSecond: number };
  timeline: string[];
  /** For the first operations that broke a rule: what the provider, the op hash, its history and the journal say. */
  evidence: string[];
  /** Everything wrong: the checker's findings, process crashes, refused or abandoned sends. */
  violations: string[];
}

const FLEET = { ingest: 1, decision: 2, delivery: 3 } as const;

/** The chaos cluster's `cluster-node-timeout`: the harness default, so a failover takes a few seconds. */
export const CHAOS_CLUSTER_NODE_TIMEOUT_MS = 1000;

/** Starts the fleet behind fault proxies, drives the workload under the fault timeline, heals, waits, checks. */
export async function runChaos(options: ChaosOptions): Promise<ChaosResult> {
  const log = options.log ?? (() => undefined);
  const seed = options.seed;
  const closers: Array<() => Promise<unknown> | unknown> = [];
  const limit = new AbortController();
  // Every sleeping producer retry listens to it; that is not a leak.
  setMaxListeners(0, limit.signal);
  const limitTimer = options.durationLimitMs ? setTimeout(() => limit.abort(), options.durationLimitMs) : undefined;
  options.stop?.addEventListener('abort', () => limit.abort(), { once: true });
  try {
    const store: ChaosStore = options.cluster ? await startClusterStore({ nodeTimeoutMs: CHAOS_CLUSTER_NODE_TIMEOUT_MS }) : await startSingleStore();
    closers.push(() => store.close());
    const sink: ChaosSink = await startChaosSink({ seed, isRejected: isRejectedRecipient, faultRate: options.sinkFaultRate ?? 0.2 });
    closers.push(() => sink.close());
    const provider: FaultProxy = await startFaultProxy({ port: sink.http.port });
    closers.push(() => provider.close());

    const ingestPort = await freePort();
    const config = chaosConfig({ redis: store.fleetRedis, providerOrigin: `http://127.0.0.1:${provider.port}`, ingestPort });
    const written = writeConfigFile(config);
    closers.push(() => written.cleanup());
    if (options.logDir) mkdirSync(options.logDir, { recursive: true });
    const fleet = new ChaosFleet(written.file, FLEET, options.logDir);
    closers.push(() => fleet.close());
    log(`starting ${store.kind === 'cluster' ? 'a Redis Cluster (3 masters + 3 replicas, a proxy per node)' : 'redis (AOF appendfsync always)'}, sink, proxies and the fleet (${Object.entries(FLEET).map(([a, n]) => `${a} ×${n}`).join(', ')})`);
    await fleet.start();
    const ingestUrl = `http://127.0.0.1:${ingestPort}`;
    await waitUntil(() => fetch(`${ingestUrl}/readyz`).then((r) => r.ok, () => false), 'ingest to be ready');

    // The checker reads Redis directly, never through the proxy.
    const rt: Runtime = await testRuntime({ ...config, redis: store.checkerRedis, log: { level: 'silent' } }, 'chaos-checker');
    closers.push(() => rt.close());

    const workload = planWorkload({
      seed,
      events: options.events,
      ratePerSecond: options.ratePerSecond ?? 20,
      lateMs: options.lateMs ?? 30_000,
      rejectRatio: options.rejectRatio ?? 0.05,
    });
    const schedule = planFaults({
      seed,
      windowMs: workload.spanMs + 1000,
      members: fleet.members.map((m) => m.app),
      leaseMs: CHAOS_DELIVERY.leaseMs,
      ...(store.kind === 'cluster' ? { clusterNodeTimeoutMs: CHAOS_CLUSTER_NODE_TIMEOUT_MS } : {}),
    });
    const nemesis = new Nemesis({ fleet, store, provider, lockHolders: () => lockHolderPids(rt.redis, rt.keys) });
    log(`driving ${options.events} events (${workload.sends.length} sends over ${(workload.spanMs / 1000).toFixed(0)} s) under ${schedule.actions.length} scheduled faults`);

    const startAt = Date.now() + 200;
    const driving = drive({ ingestUrl, workload, startAt, maxInFlight: options.maxInFlight ?? 64, sendBudgetMs: 120_000, signal: limit.signal });
    await nemesis.run(schedule, startAt, limit.signal);
    const faultsStoppedAt = Date.now();
    log(`faults stopped after ${((faultsStoppedAt - startAt) / 1000).toFixed(1)} s; waiting for the producer`);
    const driver = await driving;

    const owed = new Map<string, ExpectedOperation>();
    const unacknowledged = new Map<string, ExpectedOperation>();
    for (const [key, op] of expectedOperations(workload.events)) {
      if (driver.acknowledged.has(op.event)) owed.set(key, op);
      else if (driver.attempted.has(op.event)) unacknowledged.set(key, op);
    }
    log(`waiting for ${owed.size} operations to be terminal (bound ${TERMINAL_BOUND_MS / 1000} s after the faults stopped)`);
    const owedKeys = [...owed.keys()];
    const until = faultsStoppedAt + TERMINAL_BOUND_MS;
    while (!limit.signal.aborted && Date.now() < until && (await countNotTerminal(rt.redis, rt.keys, owedKeys)) > 0) {
      await new Promise((r) => setTimeout(r, 500));
    }
    // Let queued redeliveries of finished operations run, so a late duplicate would still be seen.
    await waitForQueuesIdle(rt.queues, { timeoutMs: 60_000, intervalMs: 250, signal: limit.signal }).catch(() =>
      log('queues did not drain within 60 s; checking anyway'),
    );
    await new Promise((r) => setTimeout(r, 1000));

    log('checking');
    const states = await readStates(rt.redis, rt.keys, [...owedKeys, ...unacknowledged.keys()]);
    const journal = await rt.journal.countByType();
    const journalScan = await scanJournal(rt.redis, rt.keys);
    const accepted = new Map<string, ProviderAcceptance>(sink.http.accepted);
    const posted = new Map<string, number>();
    for (const req of sink.http.requests) if (req.idempotencyKey) posted.set(req.idempotencyKey, (posted.get(req.idempotencyKey) ?? 0) + 1);
    const check = checkRun({
      expected: owed,
      unacknowledged,
      states,
      accepted,
      posted,
      journal,
      terminalEntries: journalScan.terminal,
      faultWindow: { from: startAt, to: faultsStoppedAt },
      boundMs: TERMINAL_BOUND_MS,
    });

    const evidence: string[] = [];
    const messageKeyOf = (key: string) => {
      const op = owed.get(key) ?? unacknowledged.get(key);
      const event = op ? workload.events[op.event] : undefined;
      return event ? eventMessageKey(CHAOS_SOURCE, event.id) : undefined;
    };
    for (const key of check.suspects.slice(0, 5)) evidence.push(...(await gatherEvidence(rt, sink.http, key, startAt, messageKeyOf(key))));
    const violations = [...check.violations];
    for (const exit of fleet.unexpectedExits) violations.push(`${exit.member} exited on its own (${exit.code ?? exit.signal}): ${exit.tail.slice(-800)}`);
    for (const err of nemesis.errors) violations.push(`fault could not be carried out: ${err}`);
    if (driver.refused.length > 0) violations.push(`ingest refused valid events: ${driver.refused.length} — ${JSON.stringify(driver.refused.slice(0, 3))}`);
    if (driver.givenUp > 0) violations.push(`sends never acknowledged within the producer's 120 s budget: ${driver.givenUp}`);
    if (options.stop?.aborted) violations.push('stopped by a signal before the run finished');
    else if (limit.signal.aborted) violations.push(`the duration limit (${options.durationLimitMs} ms) was reached before the run finished`);

    const windowSeconds = Math.max(0.001, (faultsStoppedAt - startAt) / 1000);
    const { acknowledged, attempted: _attempted, ...driverRest } = driver;
    return {
      seed,
      store: store.kind,
      events: options.events,
      sends: workload.sends.length,
      driver: { ...driverRest, acknowledged: acknowledged.size },
      faults: nemesis.counts,
      sinkFaults: { ...sink.faults },
      providerPosts: sink.http.requests.length,
      providerLookups: sink.http.lookups.length,
      journal,
      inDoubt: journalScan.inDoubtByCode,
      check,
      boundMs: TERMINAL_BOUND_MS,
      faultWindowMs: faultsStoppedAt - startAt,
      throughput: { terminalPerSecond: check.terminalDuringFaults / windowSeconds, arrivalsPerSecond: driver.requests / windowSeconds },
      timeline: nemesis.timeline,
      evidence,
      violations,
    };
  } finally {
    clearTimeout(limitTimer);
    for (const close of closers.reverse()) {
      try {
        await close();
      } catch {
        // Teardown goes on: one stuck piece must not leave the others running.
      }
    }
  }
}
