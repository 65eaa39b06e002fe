import { Redis } from 'ioredis';
import pg from 'pg';
import { round } from './stats';

/** Redis INFO fields the bench reads: commandstats calls and used_memory. */
export interface RedisSnapshot {
  usedMemory: number;
  calls: Record<string, number>;
  /** Forks since the stats were reset (AOF rewrites): each one stalls the server and competes for the CPUs. */
  forks: number;
  /** Redis's latency monitor (threshold 10 ms, set by redisResetStats): event → the worst ms seen. */
  latencyMaxMs: Record<string, number>;
}

export async function redisSnapshot(url: string): Promise<RedisSnapshot> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const memory = await redis.info('memory');
    const stats = await redis.info('commandstats');
    const general = await redis.info('stats');
    const calls: Record<string, number> = {};
    for (const m of stats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[m[1] as string] = Number(m[2]);
    const latencyMaxMs: Record<string, number> = {};
    // Each entry: [event, latest timestamp, latest ms, max ms].
    for (const e of (await redis.call('LATENCY', 'LATEST')) as [string, number, number, number][]) latencyMaxMs[e[0]] = Number(e[3]);
    return { usedMemory: Number(/^used_memory:(\d+)/m.exec(memory)?.[1] ?? 0), calls, forks: Number(/^total_forks:(\d+)/m.exec(general)?.[1] ?? 0), latencyMaxMs };
  } finally {
    redis.disconnect();
  }
}

/**
 * Every command Redis ran since its stats were reset, and the script calls
 * among them (EVAL, EVALSHA, their read-only forms, FCALL), as the bench
 * counts them for every Redis system: BullMQ's commands and the scripts'
 * inner commands included.
 */
export function commandTotals(snapshot: Pick<RedisSnapshot, 'calls'>): { commands: number; scripts: number } {
  const c = snapshot.calls;
  return { commands: Object.values(c).reduce((a, b) => a + b, 0), scripts: (c.evalsha ?? 0) + (c.eval ?? 0) + (c.fcall ?? 0) + (c.evalsha_ro ?? 0) };
}

/**
 * The commands Redis ran most since its stats were reset, each per unit of
 * work (`per`: notifications, members), the most frequent first.
 */
export function topCommands(snapshot: Pick<RedisSnapshot, 'calls'>, per: number, count = 24): Record<string, number> {
  return Object.fromEntries(
    Object.entries(snapshot.calls)
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([k, v]) => [k, round(v / per)]),
  );
}

export async function redisResetStats(url: string): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    await redis.config('RESETSTAT');
    await redis.config('SET', 'latency-monitor-threshold', '10');
    await redis.call('LATENCY', 'RESET');
  } finally {
    redis.disconnect();
  }
}

/**
 * Deletes every BullMQ queue's completed jobs (what their retention, 1 h for
 * singleshot, does later), so used_memory shows what an operation keeps once
 * its jobs are gone: state, message record, journal entry, indexes.
 */
export async function dropCompletedJobs(url: string): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    const sets: string[] = [];
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', '*:completed', 'COUNT', 1000);
      cursor = next;
      sets.push(...keys);
    } while (cursor !== '0');
    for (const set of sets) {
      const base = set.slice(0, -':completed'.length);
      for (;;) {
        const ids = await redis.zrange(set, 0, 999);
        if (ids.length === 0) break;
        await redis.unlink(...ids.flatMap((id) => [`${base}:${id}`, `${base}:${id}:logs`]));
        await redis.zrem(set, ...ids);
      }
    }
  } finally {
    redis.disconnect();
  }
}

/** Bytes the database takes on disk (the PostgreSQL counterpart of used_memory). */
export async function postgresSize(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const r = await client.query<{ size: string }>('SELECT pg_database_size(current_database()) AS size');
    return Number(r.rows[0]?.size ?? 0);
  } finally {
    await client.end();
  }
}

/**
 * Where a singleshot notification waited: queue wait (processedOn − timestamp)
 * and run time (finishedOn − processedOn) of the retained completed decide and
 * deliver jobs, from BullMQ's own job hashes.
 */
export async function bullmqJobTimes(url: string, prefix: string, queue: string, max: number): Promise<{ wait: number[]; run: number[]; attempts: number[] }> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  const out = { wait: [] as number[], run: [] as number[], attempts: [] as number[] };
  try {
    await redis.connect();
    const ids = await redis.zrange(`${prefix}:${queue}:completed`, 0, max - 1);
    const pipe = redis.pipeline();
    for (const id of ids) pipe.hmget(`${prefix}:${queue}:${id}`, 'timestamp', 'processedOn', 'finishedOn', 'attemptsMade', 'delay');
    for (const [err, v] of (await pipe.exec()) ?? []) {
      if (err || !Array.isArray(v)) continue;
      const [ts, processed, finished, attempts] = (v as (string | null)[]).map(Number) as [number, number, number, number];
      if (!ts || !processed || !finished) continue;
      out.wait.push(processed - ts);
      out.run.push(finished - processed);
      out.attempts.push(attempts || 0);
    }
  } finally {
    redis.disconnect();
  }
  return out;
}

/** Sums of Prometheus samples by metric name (all label sets) over some /metrics URLs. */
export async function scrape(urls: string[]): Promise<Map<string, number>> {
  const sums = new Map<string, number>();
  for (const url of urls) {
    const text = await fetch(url).then((r) => (r.ok ? r.text() : ''), () => '');
    for (const line of text.split('\n')) {
      if (!line || line.startsWith('#')) continue;
      const m = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
      if (!m) continue;
      const name = m[1] as string;
      const value = Number(m[3]);
      if (!Number.isFinite(value)) continue;
      // Gauges of several processes: keep the largest (event-loop lag); counters add up.
      sums.set(name, name.startsWith('nodejs_eventloop_lag') ? Math.max(sums.get(name) ?? 0, value) : (sums.get(name) ?? 0) + value);
    }
  }
  return sums;
}

/**
 * Watches a Redis's AOF while a run goes on: polls `INFO persistence` every
 * `everyMs` and keeps the moments (performance.now()) at which a rewrite was
 * in progress, so a run's slow seconds can be set against its rewrites
 * (`Measurement.rewriteSeconds`), and the bytes appended to the AOF (the sum
 * of the growths of `aof_current_size`; when a rewrite ends the size drops to
 * the new base, and the appends since the poll before are missed, at most
 * `everyMs` worth). One connection of its own.
 */
export function watchAof(url: string, everyMs = 250): { stop(): Promise<{ rewritingAt: number[]; bytesAppended: number }> } {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  const rewritingAt: number[] = [];
  let bytesAppended = 0;
  let size: number | undefined;
  let stopped = false;
  const poll = async (): Promise<void> => {
    while (!stopped) {
      try {
        const info = await redis.info('persistence');
        if (/^aof_rewrite_in_progress:1/m.test(info)) rewritingAt.push(performance.now());
        const now = Number(/^aof_current_size:(\d+)/m.exec(info)?.[1] ?? Number.NaN);
        if (Number.isFinite(now)) {
          if (size !== undefined && now > size) bytesAppended += now - size;
          size = now;
        }
      } catch {
        // A missed poll only loses a sample.
      }
      await new Promise((r) => setTimeout(r, everyMs));
    }
  };
  const running = poll();
  return {
    stop: async () => {
      stopped = true;
      await running;
      redis.disconnect();
      return { rewritingAt, bytesAppended };
    },
  };
}
