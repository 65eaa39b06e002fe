import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { measure, type Measurement } from './measure';
import { machine } from './proc';
import { benchmarksMarkdown, whyPartial, type StoredResult } from './benchmarks-md';
import { markdownTables, ratios, summarize } from './report';
import { postgresVersion } from './servers';
import { SYSTEMS, type SystemId } from './systems';
import { checkTargets, targetLines } from './targets';
import { measureSource } from './sources';
import { startTraceSink } from './trace-sink';
import { parseSourceList, sourcesTable, SourceOptionError, type SourceKind, type SourceRow } from './sources-table';
import { measureDigestRoute } from './digests';
import { TENANTS_BENCH, TENANTS_LAYOUTS, measureTenantsRow, tenantsTable, type TenantsResult, type TenantsWorkload } from './tenants';
import { keepProfileSection, profileMarkdown, profileRound, withProfileSection, type ProfileRow } from './profile-round';
import { DIGEST_BENCH_RECIPIENTS, DIGEST_BENCH_SETTINGS, digestsTable, type DigestsResult, type DigestsWorkload } from './digests-table';
import { measureRetained, retainedTable, retainedTargets } from './retained';

/**
 * `npm run bench [-- --quick]`: every system on the same workload, rounds
 * interleaved (a, b, c, d, a, b, …), then each system open loop at half of its
 * own median maximum. Prints the tables, keeps the JSON under bench/results/,
 * and (full runs) regenerates BENCHMARKS.md.
 */
const OPTIONS = {
  quick: { type: 'boolean', default: false },
  rounds: { type: 'string' },
  events: { type: 'string' },
  recipients: { type: 'string' },
  dup: { type: 'string' },
  'in-flight': { type: 'string' },
  concurrency: { type: 'string' },
  'open-seconds': { type: 'string' },
  'open-warm-seconds': { type: 'string' },
  'open-rate': { type: 'string' },
  systems: { type: 'string' },
  processes: { type: 'string' },
  appendfsync: { type: 'string', default: 'everysec' },
  'no-open-loop': { type: 'boolean', default: false },
  retained: { type: 'string' },
  // Diagnostic: Redis's automatic AOF rewrites off (AOF still on). Shows what
  // the rewrites cost; such a run judges no target and writes no BENCHMARKS.md.
  'no-aof-rewrite': { type: 'boolean', default: false },
  // Tracing on in singleshot's processes, exported to a local receiver that discards the spans.
  trace: { type: 'boolean', default: false },
  profile: { type: 'boolean', default: false },
  sources: { type: 'boolean', default: false },
  'source-list': { type: 'string' },
  'source-events': { type: 'string' },
  'source-rate': { type: 'string' },
  'source-batch': { type: 'string' },
  digests: { type: 'boolean', default: false },
  'digest-events': { type: 'string' },
  tenants: { type: 'boolean', default: false },
  'tenant-events': { type: 'string' },
  'write-md': { type: 'boolean' },
  out: { type: 'string' },
  report: { type: 'string' },
  help: { type: 'boolean', default: false },
} as const;

const USAGE = `usage: npm run bench [-- options]
  --quick                 a short smoke run (1 round of 1,500 events, no BENCHMARKS.md)
  --rounds N              saturated rounds per system, interleaved (default 5; --quick 1)
  --events N              events per round (default 10,000; --quick 1,500)
  --recipients N --dup N  recipients per event (2), parallel arrivals of each event (3)
  --in-flight N           requests in flight (64)
  --concurrency N         worker concurrency of every system (32)
  --systems a,b           only these systems (ids: ${SYSTEMS.map((s) => s.id).join(', ')})
  --processes N           singleshot start's --processes (not its default layout: no BENCHMARKS.md)
  --appendfsync everysec|always
  --open-rate R           open loop at R notifications/s for every system, not at half of each one's maximum
  --open-seconds S --open-warm-seconds S   the open loop's measured seconds (15) and lead-in (10)
  --no-open-loop          saturated rounds only
  --retained N            then singleshot start on an empty store and on one holding N retained operations,
                          a saturated round and an open loop each (default 1,000,000; --quick and 0: none);
                          with --profile, singleshot's profile rounds on a store holding N
  --sources               then one row per way in (HTTP ingest, and each source: postgres-outbox, rabbitmq,
                          nats, redis-streams), each on its own broker/DB and singleshot start; off by default
                          (RabbitMQ alone takes 10-60 s to boot)
  --source-list a,b       only these sources (http is always measured beside them)
  --source-events N       events per source row, each published twice (default 2,000; --quick 300)
  --source-rate R         publish at R events/s (default: as fast as the origin confirms)
  --source-batch N        events per publish call: one confirm, transaction, pipeline, or N POSTs at once
                          (50; with --source-rate, 1/20 of a second's events, so the pace is not 50-event bursts)
  --digests               then a plain route and a digest route (${DIGEST_BENCH_SETTINGS.window} ${DIGEST_BENCH_SETTINGS.mode} window, maxItems ${DIGEST_BENCH_SETTINGS.maxItems}),
                          each on its own singleshot start, fed the same events for ${DIGEST_BENCH_RECIPIENTS} recipients, each
                          posted twice: members/s, digests, duplicates, lost, Redis commands per member; off by default
  --digest-events N       events of each digest row (default 2,000; --quick 300)
  --tenants               then one burst on its own singleshot start three ways: one producer without a tenant,
                          ${TENANTS_BENCH.tenants} tenants (one posting half) with the fair queue, and the same without it:
                          notifications/s, p99 per tenant, Jain's index; off by default
  --tenant-events N       events of each tenants row (default 6,000; --quick 1,500)
  --no-aof-rewrite        diagnostic: Redis's automatic AOF rewrites off; judges no target, writes no BENCHMARKS.md
  --trace                 diagnostic: OpenTelemetry tracing on (OTLP/HTTP to a local receiver that discards
                          the spans), to compare with a run without; judges no target, writes no BENCHMARKS.md
  --profile               only a profile round per system (default singleshot-start, -split and bullmq-naive; 3,000 events):
                          every process under --cpu-prof and Redis under MONITOR; prints where a notification's
                          Redis commands and the fleet's CPU go, by stage and by what runs, and keeps the tables
                          under bench/results/; no speed figure, no BENCHMARKS.md
  --write-md              write BENCHMARKS.md (default for a complete run: every system, rounds and open loops)
  --out FILE              where the JSON results go (default bench/results/<start time>.json)
  --report FILE           only regenerate BENCHMARKS.md from a stored run's JSON`;

/** Refuses a bad command line: what is wrong, then the usage; exit 2, no stack trace. */
function refuse(problem: string): never {
  console.error(`bench: ${problem}\n\n${USAGE}`);
  process.exit(2);
}

function parseOptions(): ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'] {
  try {
    const { values } = parseArgs({ options: OPTIONS });
    if (values.help) {
      console.log(USAGE);
      process.exit(0);
    }
    return values;
  } catch (err) {
    // An unknown or malformed option: say which, and how to ask for the list.
    refuse((err as Error).message);
  }
}

const a = parseOptions();

/** A numeric option: a clear error naming it, not a NaN that runs a bench of nothing. */
function num(name: string, value: string | undefined, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min) refuse(`--${name} must be a number ≥ ${min}, got "${value}"`);
  return n;
}

const log = (s: string) => console.log(s);
const root = resolve(__dirname, '../..');
const quick = a.quick === true;
// Five rounds: the machine's speed drifts by tens of percent between rounds
// (report.ts roundRatios), and a median of three moved a ratio by 0.3 between
// runs of the same build.
// `--rounds 0` runs only the open loops, at the rate --open-rate gives.
const rounds = num('rounds', a.rounds, quick ? 1 : 5, 0);
const workload = { events: num('events', a.events, quick ? 1500 : a.profile ? 3000 : 10_000), recipients: num('recipients', a.recipients, 2), dup: num('dup', a.dup, 3), inFlight: num('in-flight', a['in-flight'], 64) };
const openSeconds = num('open-seconds', a['open-seconds'], quick ? 4 : 15);
// The lead-in of a full run is 10 s: the first 2–4 seconds of every Redis
// system on a fresh store run at several times its later p95 (run
// 2026-12-02T04-34-28: naive 983, 612, 217 ms; singleshot 220, 199 ms), which
// is warm-up (JIT, heap growth, a backlog of the cold start), not the steady
// state; 10 s keep them out with a margin.
const openWarmSeconds = num('open-warm-seconds', a['open-warm-seconds'], quick ? 2 : 10, 0);
// A fixed open-loop rate (notifications/s) for every system, instead of half of each one's own maximum.
const openRate = a['open-rate'] === undefined ? undefined : num('open-rate', a['open-rate'], 0);
if (rounds === 0 && openRate === undefined) refuse('--rounds 0 leaves no maximum to take half of: give the open loop a rate with --open-rate R');
if (rounds === 0 && a['no-open-loop']) refuse('--rounds 0 with --no-open-loop runs nothing');
const systems = (a.systems?.split(',') ?? (a.profile ? ['singleshot-start', 'singleshot-split', 'bullmq-naive'] : SYSTEMS.map((s) => s.id))) as SystemId[];
const unknown = systems.filter((id) => !SYSTEMS.some((s) => s.id === id));
if (unknown.length > 0) refuse(`unknown system(s) ${unknown.join(', ')}`);
if (a.appendfsync !== 'everysec' && a.appendfsync !== 'always') refuse(`--appendfsync must be everysec or always, got "${a.appendfsync}"`);
const appendfsync: 'everysec' | 'always' = a.appendfsync;
const diagnostic =
  a['no-aof-rewrite'] === true
    ? 'AOF rewrites off (--no-aof-rewrite), not the measured configuration'
    : a.trace === true
      ? 'tracing on (--trace), not the measured configuration'
      : undefined;
if (a.profile && (a['write-md'] || a.sources || a.digests || a.tenants || a.trace)) refuse('--profile runs only the profile rounds: no --write-md, --sources, --digests, --tenants or --trace with it');
if (!a.tenants && a['tenant-events'] !== undefined) refuse('--tenant-events needs --tenants');
if (diagnostic && a['write-md']) refuse(`--write-md refused: ${diagnostic}`);
const processes = a.processes === undefined ? undefined : num('processes', a.processes, 1);
const partial = whyPartial({ rounds, openRate, openLoops: !a['no-open-loop'], systems, processes });
let sourceKinds: SourceKind[] = [];
try {
  sourceKinds = a.sources ? parseSourceList(a['source-list']) : [];
} catch (err) {
  if (err instanceof SourceOptionError) refuse(`--source-list: ${err.message}`);
  throw err;
}
if (!a.sources && (a['source-list'] ?? a['source-events'] ?? a['source-rate'] ?? a['source-batch']) !== undefined) refuse('--source-list, --source-events, --source-rate and --source-batch need --sources');
const common = { concurrency: num('concurrency', a.concurrency, 32), appendfsync, ...(a['no-aof-rewrite'] === true ? { aofRewrite: false } : {}), drainSeconds: quick ? 60 : 300, ...(processes !== undefined ? { processes } : {}) };
// The cost as the store fills (retained.ts): a complete run measures it, a quick one does not.
const retainedOps = systems.includes('singleshot-start') ? num('retained', a.retained, quick ? 0 : 1_000_000, 0) : 0;
const sourceRate = a['source-rate'] === undefined ? undefined : num('source-rate', a['source-rate'], 1);
if (!a.digests && a['digest-events'] !== undefined) refuse('--digest-events needs --digests');
// As many recipients per event as the rounds, over a pool, so each recipient's digests fill up; 50 POSTs at once, as the HTTP sources row.
const digestWorkload: DigestsWorkload = { events: num('digest-events', a['digest-events'], quick ? 300 : 2000), recipientsPerEvent: Math.min(workload.recipients, DIGEST_BENCH_RECIPIENTS), recipients: DIGEST_BENCH_RECIPIENTS, batch: 50, digest: DIGEST_BENCH_SETTINGS };
const sourceWorkload = { events: num('source-events', a['source-events'], quick ? 300 : 2000), recipients: workload.recipients, batch: num('source-batch', a['source-batch'], sourceRate ? Math.max(1, Math.round(sourceRate / 20)) : 50), ...(sourceRate ? { rate: sourceRate } : {}), concurrency: common.concurrency, appendfsync, drainSeconds: common.drainSeconds };

function version(cmd: string, args: string[]): string {
  const out = spawnSync(cmd, args, { encoding: 'utf8' });
  return (out.stdout || out.stderr || '').trim().split('\n')[0] ?? '';
}

function versions(): Record<string, string> {
  const pkg = (name: string) => {
    try {
      return (JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
    } catch {
      return 'unknown';
    }
  };
  let postgres = 'not installed';
  try {
    postgres = postgresVersion();
  } catch {
    // reported as not installed
  }
  return { node: process.version, redis: version('redis-server', ['--version']), postgres, bullmq: pkg('bullmq'), ioredis: pkg('ioredis'), pg: pkg('pg'), express: pkg('express'), git: version('git', ['-C', root, 'rev-parse', '--short', 'HEAD']) };
}

async function main(): Promise<void> {
  const started = new Date();
  // Every process the bench starts inherits the environment: singleshot's traces, the peers ignore it.
  const traceSink = a.trace === true ? await startTraceSink() : undefined;
  if (traceSink) {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = traceSink.url;
    log(`bench: tracing on, exporting to ${traceSink.url} (discarded)`);
  }
  const loadAtStart = machine().loadAverage;
  log(`bench: ${workload.events} events × ${workload.recipients} recipients × ${workload.dup} parallel arrivals, ${workload.inFlight} requests in flight, worker concurrency ${common.concurrency}, AOF ${common.appendfsync}, ${rounds} round(s)${diagnostic ? `; diagnostic: ${diagnostic}` : ''}`);
  const runs = new Map<SystemId, Measurement[]>(systems.map((s) => [s, []]));
  for (let round = 1; round <= rounds; round++) {
    for (const system of systems) {
      const m = await measure(system, workload, common);
      runs.get(system)?.push(m);
      log(`round ${round} ${system}: ${m.perSecond}/s, p50/p95/p99 ${m.latencyMs.p50}/${m.latencyMs.p95}/${m.latencyMs.p99} ms, dup ${m.duplicates}, lost ${m.lost}, CPU ms/notif ${JSON.stringify(m.cpuMsPerNotification.byProcess)} store ${m.cpuMsPerNotification.store}, syscalls/notif fleet ${m.syscallsPerNotification.fleet} store ${m.syscallsPerNotification.store}${m.redis ? `, redis cmds ${m.redis.commandsPerNotification} scripts ${m.redis.scriptCallsPerNotification} AOF bytes ${m.redis.aofBytesPerNotification}` : ''}`);
    }
  }
  const open = new Map<SystemId, Measurement>();
  const openEventsPerSecond = new Map<SystemId, number>();
  if (!a['no-open-loop']) {
    for (const system of systems) {
      const max = summarize(system, runs.get(system) ?? []).perSecond.median;
      const eventsPerSecond = Math.max(1, (openRate ?? max / 2) / workload.recipients);
      const events = Math.max(10, Math.round(eventsPerSecond * openSeconds));
      const m = await measure(system, { ...workload, events }, { ...common, eventsPerSecond, warmSeconds: openWarmSeconds });
      open.set(system, m);
      openEventsPerSecond.set(system, eventsPerSecond);
      log(`open loop ${system} at ${Math.round(eventsPerSecond * workload.recipients)} notifications/s: p50/p95/p99 ${m.latencyMs.p50}/${m.latencyMs.p95}/${m.latencyMs.p99} ms (ingest answer ${m.ackMs.p50}/${m.ackMs.p95}/${m.ackMs.p99}), dup ${m.duplicates}, lost ${m.lost}`);
      // An AOF rewrite in progress during a second marks it with `*`; `|` ends
      // the lead-in, whose seconds are shown but left out of the percentiles.
      const rewriting = new Set(m.rewriteSeconds ?? []);
      const seconds = m.latencyBySecond ?? [];
      // Before the first measured second, even if a second without samples precedes it.
      const measuredFrom = openWarmSeconds > 0 ? seconds.findIndex((s) => s.second >= openWarmSeconds) : -1;
      const perSecond = seconds.map((s, i) => `${i === measuredFrom && i > 0 ? '| ' : ''}${s.p95}(${s.ackP95})${rewriting.has(s.second) ? '*' : ''}`);
      log(`  p95 by second sent: ${perSecond.join(' ')}${m.redis ? `; Redis forks ${m.redis.forks}, latency monitor ${JSON.stringify(m.redis.latencyMaxMs)}` : ''}`);
    }
  }
  const ownOpenRate = openEventsPerSecond.get('singleshot-start');
  const retained = retainedOps > 0 && rounds > 0
    ? await measureRetained(workload, common, { operations: retainedOps, ...(ownOpenRate ? { open: { eventsPerSecond: ownOpenRate, seconds: openSeconds, warmSeconds: openWarmSeconds } } : {}) }, log)
    : undefined;
  const sources: SourceRow[] = [];
  if (sourceKinds.length > 0) {
    const w = sourceWorkload;
    log(`sources: ${w.events} events × ${w.recipients} recipients, each published twice, ${w.batch} per publish, ${w.rate ? `${w.rate} events/s` : 'as fast as the origin confirms'}`);
    for (const kind of sourceKinds) {
      const row = await measureSource(kind, w);
      sources.push(row);
      log(`source ${kind}: ${row.eventsPerSecond} events/s, p50/p95/p99 ${row.latencyMs.p50}/${row.latencyMs.p95}/${row.latencyMs.p99} ms, dup ${row.duplicates}, lost ${row.lost}`);
    }
  }
  let digests: DigestsResult | undefined;
  if (a.digests) {
    const w = digestWorkload;
    log(`digests: ${w.events} events × ${w.recipientsPerEvent} of ${w.recipients} recipients, each posted twice, ${w.batch} at once; digest route ${JSON.stringify(w.digest)}`);
    digests = { workload: w, rows: [] };
    // The plain route first: it is the control the digest row is read against.
    for (const route of ['plain', 'digest'] as const) {
      const row = await measureDigestRoute(route, w, { concurrency: common.concurrency, appendfsync, drainSeconds: common.drainSeconds });
      digests.rows.push(row);
      log(`digests ${route}: ${row.eventsPerSecond} events/s, ${row.perSecond} ${route === 'plain' ? 'notifications' : 'members'}/s, sent ${row.sent}${row.digests ? ` ${JSON.stringify(row.digests.closedBy)}` : ''}, dup ${row.duplicates}, lost ${row.lost}, redis cmds ${row.redis.commandsPer} scripts ${row.redis.scriptCallsPer} per ${route === 'plain' ? 'notification' : 'member'}`);
    }
  }
  let tenants: TenantsResult | undefined;
  if (a.tenants) {
    const w: TenantsWorkload = { ...TENANTS_BENCH, events: num('tenant-events', a['tenant-events'], quick ? 1500 : 6000), inFlight: workload.inFlight, concurrency: common.concurrency, appendfsync, drainSeconds: common.drainSeconds };
    tenants = { workload: w, rows: [] };
    for (const layout of TENANTS_LAYOUTS) {
      const row = await measureTenantsRow(layout, w);
      tenants.rows.push(row);
      log(`tenants ${layout}: ${row.perSecond}/s, p99 ${row.p99} ms${row.jain !== undefined ? `, light p99 ${row.lightP99} ms, heavy p99 ${row.heavyP99} ms, Jain ${row.jain}` : ''}, sent ${row.sent}, lost ${row.lost}, dup ${row.duplicates}`);
    }
  }
  const summaries = systems.map((s) => summarize(s, runs.get(s) ?? [], open.get(s)));
  const reference: SystemId = systems.includes('singleshot-start') ? 'singleshot-start' : (systems[0] as SystemId);
  const tables = markdownTables(summaries, reference, openRate);
  log('');
  log(tables);
  log('');
  for (const line of ratios(summaries, reference)) log(line);
  if (sources.length > 0) log(`\n${sourcesTable(sources)}`);
  if (digests) log(`\n${digestsTable(digests)}`);
  if (tenants) log(`\n${tenantsTable(tenants.rows, tenants.workload)}`);
  if (retained) log(`\n${retainedTable(retained)}`);
  // A diagnostic run's figures are not the measured configuration's: no target is judged on them.
  const targets = diagnostic ? [] : [...checkTargets(summaries, { openLoopAtHalfMax: openRate === undefined }), ...(retained ? retainedTargets(retained) : [])];
  if (targets.length) log(`\ntargets (docs/benchmarks.md):\n${targetLines(targets).join('\n')}`);
  if (diagnostic) log(`\ntargets (docs/benchmarks.md): not judged (diagnostic: ${diagnostic})`);
  const env = { machine: { ...machine(), loadAverageAtStart: loadAtStart }, versions: versions() };
  const result = { startedAt: started.toISOString(), quick, ...(diagnostic ? { diagnostic } : {}), workload, options: common, rounds, ...(openRate !== undefined ? { openRate } : {}), env, summaries, targets, runs: Object.fromEntries(runs), openLoop: Object.fromEntries(open), ...(sources.length > 0 ? { sources } : {}), ...(digests ? { digests } : {}), ...(tenants ? { tenants } : {}), ...(retained ? { retained } : {}) };
  const dir = join(root, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const out = a.out ?? join(dir, quick ? 'quick-latest.json' : `${started.toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(out, JSON.stringify(result, null, 2));
  log(`\nresults: ${out}`);
  if (traceSink) {
    log(`bench: the trace receiver took ${traceSink.bytes()} bytes of spans`);
    await traceSink.close();
  }
  if (partial && !a['write-md'] && !quick) log(`BENCHMARKS.md left as it is: ${partial} (--write-md writes it anyway)`);
  if (a['write-md'] ?? (!quick && !diagnostic && !partial)) {
    writeFileSync(join(root, 'BENCHMARKS.md'), keepProfileSection(benchmarksMarkdown(result, out.startsWith(root) ? out.slice(root.length + 1) : out), formerPage()));
    log('wrote BENCHMARKS.md');
  }
}

/** BENCHMARKS.md as it is now (empty when there is none). */
function formerPage(): string {
  try {
    return readFileSync(join(root, 'BENCHMARKS.md'), 'utf8');
  } catch {
    return '';
  }
}

/** `--profile`: one profile round per system, the tables printed and kept beside the JSON. */
async function profile(): Promise<void> {
  const started = new Date();
  log(`bench --profile: ${workload.events} events × ${workload.recipients} recipients × ${workload.dup} parallel arrivals, every process under --cpu-prof, Redis under MONITOR`);
  const rows: ProfileRow[] = [];
  // A profile on a filled store only when asked for (`--profile --retained N`): it shows where the filled store's extra cost goes.
  const filled = a.retained === undefined ? 0 : retainedOps;
  for (const system of systems) {
    const row = await profileRound(system, workload, filled > 0 ? { ...common, retained: filled } : common);
    rows.push(row);
    log(`profile ${system}: ${row.notifications} notifications, fleet CPU ${row.fleetCpuMs} ms/notif (profiled ${row.cpu.totalMs})${row.redis ? `, redis cmds ${row.redis.commands} scripts ${row.redis.scriptCalls}` : ''}`);
  }
  const md = profileMarkdown(rows);
  log(`\n${md}`);
  const dir = join(root, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const base = a.out ?? join(dir, `profile-${started.toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(base, JSON.stringify({ startedAt: started.toISOString(), workload, options: common, env: { machine: machine(), versions: versions() }, rows }, null, 2));
  const rel = base.startsWith(root) ? base.slice(root.length + 1) : base;
  const v = versions();
  const heading = `## Where a notification's work goes\n\nA profile round per system (\`npm run bench -- --profile\`, ${started.toISOString().slice(0, 10)}, commit ${v.git}, Node ${v.node}): ${workload.events} events × ${workload.recipients} recipients × ${workload.dup} parallel arrivals, every process under \`--cpu-prof\`, Redis under MONITOR${filled > 0 ? `, singleshot on a store already holding ${filled.toLocaleString('en-US')} retained operations` : ''}; results \`${rel}\`. The profiler and MONITOR slow every system down: read the shares and the counts, not the speed. CPU counts only the samples taken during the measured run.`;
  writeFileSync(join(root, 'BENCHMARKS.md'), withProfileSection(formerPage(), `${heading}\n\n${md}`));
  log(`\nresults: ${base}\nwrote the profile section of BENCHMARKS.md`);
}

/** `--report FILE`: BENCHMARKS.md again from a stored run's results, without running anything. */
function report(file: string): void {
  const result = JSON.parse(readFileSync(file, 'utf8')) as StoredResult;
  const path = resolve(file);
  writeFileSync(join(root, 'BENCHMARKS.md'), keepProfileSection(benchmarksMarkdown(result, path.startsWith(root) ? path.slice(root.length + 1) : path), formerPage()));
  log(`wrote BENCHMARKS.md from ${file}`);
}

(a.report ? Promise.resolve().then(() => report(a.report as string)) : a.profile ? profile() : main()).then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
