import { randomBytes } from 'node:crypto';
import { Pool } from 'undici';
import { SingleBar, Presets } from 'cli-progress';
import { startLoadSink } from './sink';
import { startEmbeddedFleet, type EmbeddedFleet, type FleetLayout, type ProducerLimit } from './fleet';
import { guardProcess, Teardown } from './teardown';
import { percentile } from '@singleshot/core';

export interface LoadtestOptions {
  url: string;
  events: number;
  dup: number;
  concurrency: number;
  sinkPort: number;
  drainSeconds: number;
  embedded: boolean;
  appendfsync: string;
  layout?: FleetLayout;
  json: boolean;
  progress: boolean;
  /** Open loop: events started per second on a fixed schedule, never waiting for answers (`events` is then rate × duration). */
  rate?: number;
  /** With `embedded`: ingest's per-producer limit in requests/s (default: sized above the offered load). */
  producerLimit?: number;
}

export interface LoadtestReport {
  events: number;
  requests: number;
  accepted: number;
  duplicateAnswers: number;
  retriedRequests: number;
  failedRequests: number;
  /** 429 answers (over the producer's rate limit): waited `Retry-After`, then retried. */
  rateLimitedAnswers: number;
  /** 503 answers (ingest shedding load, or Redis not confirming): waited `Retry-After`, then retried. */
  overloadedAnswers: number;
  /** With --embedded: ingest's per-producer limit the fleet ran with. */
  producerLimit?: ProducerLimit;
  /** With --embedded: the pids of the fleet and its Redis (all stopped before the report). */
  embeddedPids?: number[];
  notifications: number;
  duplicates: number;
  lost: number;
  sendSeconds: number;
  totalSeconds: number;
  throughputPerSecond: number;
  /** Open loop (--rate): the events per second offered. */
  openLoopRate?: number;
  latencyMs: { p50: number; p95: number; p99: number; max: number };
  /** With --embedded: peak resident memory of the fleet processes and of Redis (MiB). */
  peakRssMb?: { fleet: number; redis: number };
  /** CPU milliseconds per notification, by process (fleet and Redis with --embedded; the load generator and sink always). */
  cpuMsPerNotification?: { fleet?: number; redis?: number; loadgen: number };
}

/**
 * Sends N events, each K times in parallel, to a running ingest; the fleet's
 * webhook provider must point at this sink (`--embedded` arranges that). Counts
 * what the sink received: every event must arrive exactly once.
 */
export async function runLoadtest(opts: LoadtestOptions): Promise<LoadtestReport> {
  const sink = await startLoadSink(opts.sinkPort);
  const teardown = new Teardown();
  let fleet: EmbeddedFleet | undefined;
  const stop = async () => {
    await (fleet ? fleet.stop() : teardown.stopAll());
    await sink.close();
  };
  const unguard = guardProcess(teardown, stop);
  const producerLimit = opts.embedded ? embeddedProducerLimit(opts) : undefined;
  try {
    if (producerLimit) {
      fleet = await startEmbeddedFleet({
        sinkPort: sink.port,
        appendfsync: opts.appendfsync,
        concurrency: Math.max(16, opts.concurrency),
        layout: opts.layout ?? 'single',
        producerLimit,
        teardown,
      });
    }
    const embeddedPids = fleet?.pids();
    const base = fleet?.ingestUrl ?? opts.url;
    const pool = new Pool(base, { connections: opts.concurrency, pipelining: 1 });
    const run = randomBytes(4).toString('hex');
    const firstSent = new Map<string, number>();
    const counts = { requests: 0, accepted: 0, duplicateAnswers: 0, retried: 0, failed: 0, rateLimited: 0, overloaded: 0 };
    const bar = opts.progress && !opts.json ? new SingleBar({ format: '{phase} [{bar}] {value}/{total} {percentage}% | {eta_formatted} left' }, Presets.shades_classic) : undefined;
    bar?.start(opts.events, 0, { phase: 'sending  ' });

    // Never rejects: an answer that is not 202 after every retry is counted as
    // failed (and shows up as lost), so one bad request cannot end the run.
    const post = async (eventId: string, index: number): Promise<void> => {
      const body = JSON.stringify({ id: eventId, source: 'loadtest', type: 'order.created', recipients: [`r${index % 100}@loadtest.example`], data: { orderId: eventId, loadtestId: eventId } });
      let attempt = 0;
      for (let waits = 0; attempt < MAX_ATTEMPTS && waits < MAX_RETRY_AFTER_WAITS; ) {
        counts.requests++;
        let backoffMs = 50 * 2 ** attempt;
        try {
          const res = await pool.request({ method: 'POST', path: '/v1/events', headers: { 'content-type': 'application/json' }, body });
          const text = await res.body.text();
          if (res.statusCode === 202) {
            if ((JSON.parse(text) as { status: string }).status === 'accepted') counts.accepted++;
            else counts.duplicateAnswers++;
            return;
          }
          if (res.statusCode === 429 || res.statusCode === 503) {
            // The server said when to come back: wait that long, not an attempt of our own.
            if (res.statusCode === 429) counts.rateLimited++;
            else counts.overloaded++;
            waits++;
            counts.retried++;
            await sleep(retryAfterMs(res.headers['retry-after']));
            continue;
          }
          if (res.statusCode < 500) {
            // 4xx other than 429: the same request will not fare better.
            counts.failed++;
            return;
          }
        } catch {
          backoffMs = Math.max(backoffMs, 100);
        }
        attempt++;
        if (attempt < MAX_ATTEMPTS) {
          counts.retried++;
          await sleep(backoffMs);
        }
      }
      counts.failed++;
    };

    const cpuBefore = { self: process.cpuUsage(), fleet: fleet?.cpuSeconds() };
    const started = Date.now();
    let next = 0;
    let done = 0;
    const sendEvent = async (index: number): Promise<void> => {
      const eventId = `lt-${run}-${index}`;
      firstSent.set(eventId, Date.now());
      await Promise.all(Array.from({ length: opts.dup }, () => post(eventId, index)));
      done++;
      bar?.update(done);
    };
    if (opts.rate) {
      // Open loop: event i starts at i / rate seconds, whether or not earlier ones were answered.
      const pending: Promise<void>[] = [];
      for (let index = 0; index < opts.events; index++) {
        const wait = started + (index * 1000) / opts.rate - Date.now();
        if (wait > 1) await new Promise((r) => setTimeout(r, wait));
        pending.push(sendEvent(index));
      }
      await Promise.all(pending);
    } else {
      // Closed loop: each lane takes one event at a time and posts it K times in parallel.
      const lanes = Math.max(1, Math.floor(opts.concurrency / opts.dup));
      await Promise.all(
        Array.from({ length: lanes }, async () => {
          while (next < opts.events) await sendEvent(next++);
        }),
      );
    }
    const sendSeconds = (Date.now() - started) / 1000;
    bar?.update(opts.events, { phase: 'draining ' });
    bar?.setTotal(opts.events);
    const ours = () => [...sink.received.values()].filter((v) => v.eventId.startsWith(`lt-${run}-`));
    const drainDeadline = Date.now() + opts.drainSeconds * 1000;
    while (ours().length < opts.events && Date.now() < drainDeadline) {
      bar?.update(ours().length);
      await new Promise((r) => setTimeout(r, 100));
    }
    // A little longer, so a late duplicate would still be seen.
    await new Promise((r) => setTimeout(r, 1000));
    bar?.update(ours().length);
    bar?.stop();
    await pool.close();

    const peakRssMb = fleet?.peakRssMb();
    const self = process.cpuUsage(cpuBefore.self);
    const fleetCpu = fleet?.cpuSeconds();
    const received = ours();
    const lastAt = Math.max(...received.map((r) => r.firstAt), started);
    const latencies = received.map((r) => r.firstAt - (firstSent.get(r.eventId) ?? r.firstAt)).sort((a, b) => a - b);
    const totalSeconds = (lastAt - started) / 1000;
    return {
      events: opts.events,
      requests: counts.requests,
      accepted: counts.accepted,
      duplicateAnswers: counts.duplicateAnswers,
      retriedRequests: counts.retried,
      failedRequests: counts.failed,
      rateLimitedAnswers: counts.rateLimited,
      overloadedAnswers: counts.overloaded,
      ...(producerLimit ? { producerLimit } : {}),
      ...(embeddedPids ? { embeddedPids } : {}),
      notifications: received.length,
      duplicates: received.reduce((sum, r) => sum + (r.count - 1), 0),
      lost: opts.events - new Set(received.map((r) => r.eventId)).size,
      sendSeconds,
      totalSeconds,
      throughputPerSecond: totalSeconds > 0 ? received.length / totalSeconds : 0,
      ...(opts.rate ? { openLoopRate: opts.rate } : {}),
      latencyMs: { p50: percentile(latencies, 50), p95: percentile(latencies, 95), p99: percentile(latencies, 99), max: latencies.at(-1) ?? Number.NaN },
      ...(peakRssMb ? { peakRssMb } : {}),
      cpuMsPerNotification: {
        loadgen: round2((self.user + self.system) / 1000 / Math.max(1, received.length)),
        ...(fleetCpu && cpuBefore.fleet
          ? {
              fleet: round2(((fleetCpu.fleet - cpuBefore.fleet.fleet) * 1000) / Math.max(1, received.length)),
              redis: round2(((fleetCpu.redis - cpuBefore.fleet.redis) * 1000) / Math.max(1, received.length)),
            }
          : {}),
      },
    };
  } finally {
    await stop();
    unguard();
  }
}

const MAX_ATTEMPTS = 8;
/** Bounds the `Retry-After` waits of one request, so a limit far below the load still ends the run. */
const MAX_RETRY_AFTER_WAITS = 120;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `Retry-After` in seconds (ingest sends whole seconds), as ms between 50 ms and 30 s; 1 s when absent or unreadable. */
export function retryAfterMs(header: string | string[] | undefined): number {
  const seconds = Number(Array.isArray(header) ? header[0] : header);
  if (!Number.isFinite(seconds) || seconds < 0) return 1_000;
  return Math.min(30_000, Math.max(50, seconds * 1_000));
}

/**
 * The fleet's per-producer limit: `--producer-limit` when given (to see the
 * limit at work), else above anything the run offers: twice the open loop's
 * requests per second, or (closed loop, no set rate) a ceiling no 2-core
 * fleet reaches. The burst matches, so the bucket never empties at start.
 */
export function embeddedProducerLimit(opts: Pick<LoadtestOptions, 'producerLimit' | 'rate' | 'dup'>): ProducerLimit {
  if (opts.producerLimit) return { perSecond: opts.producerLimit, burst: opts.producerLimit };
  const perSecond = opts.rate ? Math.max(1_000, opts.rate * opts.dup * 2) : 1_000_000;
  return { perSecond, burst: perSecond };
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

export function formatReport(r: LoadtestReport): string {
  return [
    `events            ${r.events} (each sent ${Math.round(r.requests / Math.max(1, r.events))}× on average; ${r.requests} requests, ${r.retriedRequests} retried, ${r.failedRequests} failed)`,
    `answers           ${r.accepted} accepted, ${r.duplicateAnswers} duplicate, ${r.rateLimitedAnswers} rate-limited (429), ${r.overloadedAnswers} overloaded (503); 429/503 retried after Retry-After`,
    ...(r.producerLimit ? [`producer limit    ${r.producerLimit.perSecond} requests/s (burst ${r.producerLimit.burst}) at the embedded ingest`] : []),
    `notifications     ${r.notifications} at the sink`,
    `duplicates        ${r.duplicates}`,
    `lost              ${r.lost}`,
    `throughput        ${r.throughputPerSecond.toFixed(0)} notifications/s end to end (${r.totalSeconds.toFixed(1)} s; sending took ${r.sendSeconds.toFixed(1)} s)`,
    ...(r.openLoopRate ? [`open loop         ${r.openLoopRate} events/s offered on a schedule`] : []),
    `latency (ms)      p50 ${r.latencyMs.p50}  p95 ${r.latencyMs.p95}  p99 ${r.latencyMs.p99}  max ${r.latencyMs.max}  (first post → sink)`,
    ...(r.peakRssMb ? [`peak memory       fleet ${r.peakRssMb.fleet} MiB, redis ${r.peakRssMb.redis} MiB (VmHWM)`] : []),
    ...(r.cpuMsPerNotification
      ? [`cpu per notif.    ${r.cpuMsPerNotification.fleet !== undefined ? `fleet ${r.cpuMsPerNotification.fleet} ms, redis ${r.cpuMsPerNotification.redis} ms, ` : ''}load generator + sink ${r.cpuMsPerNotification.loadgen} ms`]
      : []),
  ].join('\n');
}
