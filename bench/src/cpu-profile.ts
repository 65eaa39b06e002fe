import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where the fleet's CPU goes, per notification, from the `--cpu-prof`
 * profiles of a saturated round: by what runs (BullMQ, ioredis, pino, Node's
 * HTTP, our own libraries and apps, GC; a builtin such as JSON.stringify
 * counts under its caller) and by stage (the app whose
 * frame is nearest on the stack). Time with no app frame on its stack is a
 * callback from I/O or a timer (a socket read, ioredis parsing a reply).
 */
export interface CpuBreakdown {
  /** Milliseconds of CPU per notification over every profile, idle left out. */
  totalMs: number;
  byWhat: Record<string, number>;
  byStage: Record<string, number>;
  /** Our own functions with the most self time: `name (file:line)` → ms per notification. */
  topOwn: Record<string, number>;
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface Profile {
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** npm packages by what they are part of; a package not listed counts under its own name. */
const GROUPS: Record<string, string> = {
  bullmq: 'BullMQ',
  msgpackr: 'BullMQ',
  'cron-parser': 'BullMQ',
  ioredis: 'ioredis',
  'redis-parser': 'ioredis',
  '@ioredis/commands': 'ioredis',
  'cluster-key-slot': 'ioredis',
  denque: 'ioredis',
  'standard-as-callback': 'ioredis',
  pino: 'pino',
  'sonic-boom': 'pino',
  'fast-redact': 'pino',
  'pino-std-serializers': 'pino',
  'quick-format-unescaped': 'pino',
  'safe-stable-stringify': 'pino',
  'thread-stream': 'pino',
  zod: 'zod',
  'prom-client': 'prom-client',
  tdigest: 'prom-client',
  bintrees: 'prom-client',
};

/** Roles of `singleshot-split`'s processes that are one app each. */
const APPS = new Set(['ingest', 'decision', 'delivery']);

const maps = new Map<string, SourceMap | undefined>();
function sourceMapOf(url: string): SourceMap | undefined {
  if (!maps.has(url)) {
    let map: SourceMap | undefined;
    try {
      const file = `${fileURLToPath(url)}.map`;
      if (existsSync(file)) map = new SourceMap(JSON.parse(readFileSync(file, 'utf8')) as ConstructorParameters<typeof SourceMap>[0]);
    } catch {
      map = undefined;
    }
    maps.set(url, map);
  }
  return maps.get(url);
}

/** The source file (repo-relative, `libs/store/src/keys.ts`) and line of a frame in one of our bundles. */
function ownSource(frame: ProfileNode['callFrame']): { file: string; line: number } | undefined {
  if (!frame.url.startsWith('file://') || frame.url.includes('/node_modules/')) return undefined;
  const entry = sourceMapOf(frame.url)?.findEntry(frame.lineNumber, frame.columnNumber);
  const file = entry && 'originalSource' in entry ? entry.originalSource : undefined;
  if (!file) return undefined;
  const at = file.search(/(?:^|\/)(?:libs|apps|bench|test)\//);
  return { file: at < 0 ? file : file.slice(file[at] === '/' ? at + 1 : at), line: (entry as { originalLine: number }).originalLine + 1 };
}

/** What a frame is part of. */
function whatOf(frame: ProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === '(program)') return 'V8 and native (program)';
  if (url === '') return 'V8 builtins (no caller)';
  const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1];
  if (pkg) return GROUPS[pkg] ?? pkg;
  if (url.startsWith('node:')) {
    if (/^node:(_http|http|internal\/http)/.test(url)) return 'Node HTTP';
    if (/^node:(net|stream|internal\/(streams|stream_base|net))/.test(url)) return 'Node net and streams';
    return 'Node core';
  }
  const own = ownSource(frame);
  if (!own) return 'ours (unmapped)';
  const m = /^(libs|apps)\/([^/]+)\//.exec(own.file);
  return m ? `ours: ${m[1]}/${m[2]}` : `ours: ${own.file.split('/')[0]}`;
}

/** The app of a frame (`delivery`), for the stage of the samples below it; `intake` is ingest's library. */
function stageOf(frame: ProfileNode['callFrame']): string | undefined {
  const own = ownSource(frame);
  const m = own ? /^(?:apps\/([^/]+)|libs\/(intake))\//.exec(own.file) : null;
  if (!m) return undefined;
  return m[1] ?? 'ingest';
}

/**
 * Reads every `*.cpuprofile` in `dir`, keeps the samples taken inside the
 * measured run (`window`, on the monotonic clock both V8 and `process.hrtime`
 * read; start-up, warm-up and shutdown left out), and divides by
 * `notifications`. A process whose role is one app (`singleshot-split`) is
 * that stage as a whole; in a process of several apps the stage is the app
 * nearest on the stack.
 */
export function cpuBreakdown(dir: string, notifications: number, window: { fromUs: number; toUs: number; roles: Record<string, string> }): CpuBreakdown {
  const byWhat = new Map<string, number>();
  const byStage = new Map<string, number>();
  const byOwn = new Map<string, number>();
  let total = 0;
  const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us);
  for (const name of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(readFileSync(join(dir, name), 'utf8')) as Profile;
    // CPU.<date>.<time>.<pid>.<thread>.<n>.cpuprofile
    const role = window.roles[name.split('.')[3] ?? ''];
    const wholeStage = role && APPS.has(role) ? role : undefined;
    const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const stageCache = new Map<number, string>();
    const stageOfNode = (id: number): string => {
      const known = stageCache.get(id);
      if (known) return known;
      const node = nodes.get(id)!;
      const up = parent.get(id);
      const stage = stageOf(node.callFrame) ?? (up === undefined ? 'no app frame (I/O callbacks, timers)' : stageOfNode(up));
      stageCache.set(id, stage);
      return stage;
    };
    // A builtin (a Promise job, an Array method; url '') counts under the
    // code that called it, so that JSON.stringify inside ioredis is ioredis.
    const ownerCache = new Map<number, number>();
    const ownerOf = (id: number): number => {
      const known = ownerCache.get(id);
      if (known !== undefined) return known;
      const frame = nodes.get(id)!.callFrame;
      const up = parent.get(id);
      const builtin = frame.url === '' && !frame.functionName.startsWith('(') && up !== undefined && nodes.get(up)?.callFrame.functionName !== '(root)';
      const owner = builtin ? ownerOf(up) : id;
      ownerCache.set(id, owner);
      return owner;
    };
    let at = profile.startTime;
    profile.samples.forEach((id, i) => {
      const node = nodes.get(id);
      const us = profile.timeDeltas[i] ?? 0;
      at += us;
      if (at < window.fromUs || at > window.toUs) return;
      if (!node || node.callFrame.functionName === '(idle)' || us <= 0) return;
      total += us;
      const owner = nodes.get(ownerOf(id))!.callFrame;
      const what = whatOf(owner);
      add(byWhat, what, us);
      add(byStage, wholeStage ?? stageOfNode(id), us);
      if (what.startsWith('ours: ')) {
        const own = ownSource(owner);
        add(byOwn, `${owner.functionName || '(anonymous)'} (${own?.file}:${own?.line})`, us);
      }
    });
  }
  const ms = (us: number) => Math.round((us / 1000 / Math.max(1, notifications)) * 1000) / 1000;
  const table = (map: Map<string, number>, most = Infinity) => Object.fromEntries([...map].sort((a, b) => b[1] - a[1]).slice(0, most).map(([k, v]) => [k, ms(v)]));
  return { totalMs: ms(total), byWhat: table(byWhat), byStage: table(byStage), topOwn: table(byOwn, 15) };
}
