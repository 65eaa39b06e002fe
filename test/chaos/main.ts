/**
 * `npm run chaos -- --events N --seed S [options]` (node dist/test/chaos/main.js):
 * runs the fleet (ingest ×1, decision ×2, delivery ×3 as OS processes) against
 * a real Redis (AOF, appendfsync always) behind fault proxies, drives N events
 * under a seeded fault timeline, heals, waits for every operation to be
 * terminal and checks the outcome (see checker.ts). Prints the figures; exits
 * 1 on any violation, 2 on bad arguments. `--cluster` runs it on a local Redis
 * Cluster (3 masters + 3 replicas) with master failovers (SIGKILL, and SIGSTOP
 * past the node timeout) and link faults between the apps and one master.
 *
 * Same seed, same run plan: the events and their send times, the fault
 * timeline (kinds, times, targets, durations) and the provider's answer to the
 * n-th POST of each key. Not reproducible: OS scheduling — which operation a
 * fault hits, which process holds a lock when one is stopped, retry timing.
 */
import { parseArgs } from 'node:util';
import { formatReport } from './report';
import { runChaos } from './run-chaos';

const USAGE = `usage: npm run chaos -- --events N --seed S [--cluster] [--rate EVENTS_PER_S] [--late-ms MS]
                     [--reject-ratio R] [--sink-fault-rate R] [--duration-limit SECONDS] [--json] [--timeline] [--logs DIR]`;

async function main(): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      options: {
        events: { type: 'string' },
        seed: { type: 'string' },
        cluster: { type: 'boolean' },
        rate: { type: 'string' },
        'late-ms': { type: 'string' },
        'reject-ratio': { type: 'string' },
        'sink-fault-rate': { type: 'string' },
        'duration-limit': { type: 'string' },
        json: { type: 'boolean' },
        timeline: { type: 'boolean' },
        logs: { type: 'string' },
        help: { type: 'boolean' },
      },
    }));
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const num = (name: string, fallback?: number): number | undefined => {
    const raw = values[name];
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0) throw new RangeError(`--${name} must be a non-negative number (got ${String(raw)})`);
    return n;
  };
  let events: number;
  let options: Omit<Parameters<typeof runChaos>[0], 'events' | 'seed'>;
  try {
    events = num('events') ?? NaN;
    if (!Number.isInteger(events) || events < 1) throw new RangeError('--events N is required (a positive integer)');
    const limit = num('duration-limit');
    options = {
      cluster: values.cluster === true,
      ratePerSecond: num('rate', 20),
      lateMs: num('late-ms', 30_000),
      rejectRatio: num('reject-ratio', 0.05),
      sinkFaultRate: num('sink-fault-rate', 0.2),
      ...(limit !== undefined ? { durationLimitMs: limit * 1000 } : {}),
      ...(typeof values.logs === 'string' ? { logDir: values.logs } : {}),
    };
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const seed = typeof values.seed === 'string' ? values.seed : String(Date.now() % 100_000);
  const json = values.json === true;

  // SIGINT or SIGTERM ends the run through its teardown, so no Redis or fleet
  // member outlives it; a second one exits at once.
  const stop = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stop.signal.aborted) process.exit(130);
      console.error(`[chaos] ${signal}: stopping the fleet and Redis (again to exit at once)`);
      stop.abort();
    });
  }
  const result = await runChaos({
    events,
    seed,
    ...options,
    stop: stop.signal,
    log: json ? undefined : (line) => console.log(`[chaos] ${line}`),
  });
  if (json) console.log(JSON.stringify(result, null, 2));
  else {
    if (values.timeline) console.log(result.timeline.join('\n'));
    console.log(formatReport(result));
    if (result.evidence.length > 0) console.log(`\nevidence (times since the start; see --timeline):\n${result.evidence.join('\n')}`);
    if (result.violations.length > 0) {
      const args = process.argv.slice(2).filter((a) => a !== '--timeline' && a !== '--json');
      if (values.seed === undefined) args.push('--seed', seed);
      console.log(`\nreproduce with: npm run chaos -- ${args.join(' ')} --timeline`);
    }
  }
  return result.violations.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
