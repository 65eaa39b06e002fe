import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuBreakdown, type CpuBreakdown } from './cpu-profile';
import type { Workload } from './driver';
import { measure, type Measurement } from './measure';
import type { RedisBreakdown } from './redis-monitor';
import type { SystemId } from './systems';

/** One system's profile round: where a notification's Redis work and the fleet's CPU go. */
export interface ProfileRow {
  system: SystemId;
  notifications: number;
  /** Under the profiler and MONITOR: far below a plain round, never a speed figure. */
  perSecond: number;
  /** The fleet's CPU per notification as the OS counts it in this round (the profiler's own cost included). */
  fleetCpuMs: number;
  redis?: RedisBreakdown;
  cpu: CpuBreakdown;
}

/**
 * A saturated round of `system` with every process under `--cpu-prof` and
 * Redis under MONITOR: the profiles are read once the processes have exited
 * (a profile is written at exit).
 */
export async function profileRound(system: SystemId, w: Workload, opts: Parameters<typeof measure>[2]): Promise<ProfileRow> {
  const dir = mkdtempSync(join(tmpdir(), 'singleshot-bench-prof-'));
  try {
    const m: Measurement = await measure(system, w, { ...opts, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`], monitor: true });
    return {
      system,
      notifications: m.notifications,
      perSecond: m.perSecond,
      fleetCpuMs: m.cpuMsPerNotification.fleet,
      ...(m.monitor ? { redis: m.monitor } : {}),
      cpu: cpuBreakdown(dir, m.notifications, m.profileWindow ?? { fromUs: 0, toUs: Number.MAX_SAFE_INTEGER, roles: {} }),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One table, systems side by side: the `most` largest rows (by their largest cell), the rest summed in one. */
const cells = (rows: readonly ProfileRow[], pick: (r: ProfileRow) => Record<string, number> | undefined, format: (v: number) => string, most = 16): string => {
  const largest = (k: string) => Math.max(...rows.map((r) => pick(r)?.[k] ?? 0));
  const keys = [...new Set(rows.flatMap((r) => Object.keys(pick(r) ?? {})))].sort((x, y) => (x === 'total' ? -1 : y === 'total' ? 1 : largest(y) - largest(x)));
  const shown = keys.slice(0, most);
  const rest = keys.slice(most);
  const line = (label: string, value: (r: ProfileRow) => number | undefined) => `| ${label} | ${rows.map((r) => { const v = value(r); return v === undefined ? '' : format(v); }).join(' | ')} |`;
  return [
    `| | ${rows.map((r) => r.system).join(' | ')} |`,
    `|---|${rows.map(() => '---:').join('|')}|`,
    ...shown.map((k) => line(k, (r) => pick(r)?.[k])),
    ...(rest.length > 0 ? [line(`${rest.length} more, together`, (r) => rest.reduce((t, k) => t + (pick(r)?.[k] ?? 0), 0))] : []),
  ].join('\n');
};

/** The breakdown as Markdown tables, systems side by side. */
export function profileMarkdown(rows: readonly ProfileRow[]): string {
  const ms = (v: number) => v.toFixed(3);
  const n = (v: number) => v.toFixed(2);
  return [
    '**Redis commands per notification, by stage** (MONITOR; commands inside a script count under its stage)',
    '',
    cells(rows, (r) => (r.redis ? Object.fromEntries([['total', r.redis.commands], ...Object.entries(r.redis.byStage).map(([k, v]) => [k, v.commands])]) : undefined), n),
    '',
    '**Script calls per notification**',
    '',
    cells(rows, (r) => (r.redis ? Object.fromEntries([['total', r.redis.scriptCalls], ...Object.entries(r.redis.byScript).map(([k, v]) => [k, v.calls])]) : undefined), n),
    '',
    '**Redis commands per notification, by command**',
    '',
    cells(rows, (r) => r.redis?.byCommand, n),
    '',
    '**Fleet CPU ms per notification, by what runs** (`--cpu-prof` self time, idle left out)',
    '',
    cells(rows, (r) => ({ total: r.cpu.totalMs, ...r.cpu.byWhat }), ms),
    '',
    '**Fleet CPU ms per notification, by stage** (the app nearest on the stack)',
    '',
    cells(rows, (r) => r.cpu.byStage, ms),
    '',
    '**Our own functions with the most self time** (ms per notification)',
    '',
    cells(rows, (r) => r.cpu.topOwn, ms),
  ].join('\n');
}

const BEGIN = '<!-- profile: written by `npm run bench -- --profile`, kept when the rest of the page is regenerated -->';
const END = '<!-- /profile -->';
const PREVIOUS = '### The profile run before';

/** The profile section of BENCHMARKS.md, if it has one. */
export function profileSectionOf(page: string): string | undefined {
  const from = page.indexOf(BEGIN);
  const to = page.indexOf(END);
  return from >= 0 && to > from ? page.slice(from, to + END.length) : undefined;
}

/**
 * `page` with its profile section set to `latest` (heading and tables); the
 * section's former latest run is kept below it as the run before, so a change
 * that runs the profile before and after it leaves both on the page.
 */
export function withProfileSection(page: string, latest: string): string {
  const old = profileSectionOf(page);
  const oldLatest = old?.slice(BEGIN.length, old.includes(PREVIOUS) ? old.indexOf(PREVIOUS) : old.length - END.length).trim();
  const section = [BEGIN, latest.trim(), ...(oldLatest ? ['', PREVIOUS, '', oldLatest.replace(/^## .*\n+/, '')] : []), END].join('\n');
  return old ? page.replace(old, section) : `${page.trimEnd()}\n\n${section}\n`;
}

/** A regenerated page with the profile section of the page it replaces carried over. */
export function keepProfileSection(generated: string, former: string): string {
  const section = profileSectionOf(former);
  return section ? `${generated.trimEnd()}\n\n${section}\n` : generated;
}
