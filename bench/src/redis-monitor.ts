import { createHash, randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { connect } from 'node:net';
import { Redis } from 'ioredis';

/**
 * Where a plain notification's Redis work goes, per notification: by stage
 * (ingest, decide, deliver and BullMQ's own job moves of each queue), by
 * command, and by script. Commands run inside a script count under the
 * script's stage, as `INFO commandstats` counts them under their own name.
 */
export interface RedisBreakdown {
  /** Commands, those inside scripts included: the bench's "Redis commands per notification". */
  commands: number;
  scriptCalls: number;
  byStage: Record<string, { commands: number; scriptCalls: number }>;
  byCommand: Record<string, number>;
  byScript: Record<string, { calls: number; commandsInside: number }>;
}

/** The stage our own scripts serve; a script not listed counts as `other`. */
const STAGE_OF_SCRIPT: Record<string, string> = {
  'message-arrive': 'ingest',
  'message-decided': 'decide',
  'op-schedule': 'decide',
  claim: 'deliver',
  commit: 'deliver',
  'extend-lock': 'deliver',
  'rate-limit': 'deliver',
};

/** sha1 → name of every script a plain notification may run: ours, and BullMQ's (its commands are EVALSHA too). */
function scriptNames(): Map<string, { name: string; ours: boolean }> {
  const sha = (lua: string) => createHash('sha1').update(lua).digest('hex');
  const names = new Map<string, { name: string; ours: boolean }>();
  // Our scripts as the build bundles them (includes expanded), read from the
  // repo: the bench imports nothing on the path it measures. bench/src and
  // dist/bench are both two levels below the repo.
  const root = resolve(__dirname, '../..');
  const luaDir = join(root, 'libs/store/src/lua');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { readLuaWithIncludes } = require(join(root, 'tools/lua-include.mjs')) as { readLuaWithIncludes(file: string): string };
  for (const file of readdirSync(luaDir).filter((f) => f.endsWith('.lua'))) {
    // A file named with its key count (`<name>-<keys>.lua`) is the same script, so a
    // checkout of another version can be profiled with this bench beside this one.
    names.set(sha(readLuaWithIncludes(join(luaDir, file))), { name: file.slice(0, -4).replace(/-\d+$/, ''), ours: true });
  }
  // BullMQ keeps each command's Lua in its scripts module (`name` is `moveToFinished` and the like).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const bullmq = require('bullmq/dist/cjs/scripts') as Record<string, { name: string; content: string }>;
  for (const script of Object.values(bullmq)) if (script?.content) names.set(sha(script.content), { name: script.name, ours: false });
  return names;
}

/** The BullMQ queue a key belongs to (`{ssq}:deliver:3:wait` → `deliver`), if any. */
function queueOf(args: readonly string[]): string | undefined {
  for (const arg of args) {
    const m = /:(decide|deliver|render|dead)(?::\d+)?:/.exec(arg);
    if (m) return m[1];
  }
  return undefined;
}

/**
 * Starts `MONITOR` on `url` and counts what every client asks until `stop`.
 * MONITOR slows Redis down: a profile round measures where the work goes,
 * never how fast the system is.
 */
export async function monitorRedis(url: string): Promise<{ stop(notifications: number): Promise<RedisBreakdown> }> {
  const names = scriptNames();
  // A plain socket: MONITOR's stream is one status line per command, which
  // ioredis's monitor mode lost track of under this load.
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((ok, fail) => socket.once('connect', ok).once('error', fail));
  socket.write('MONITOR\r\n');
  // Counting starts once Redis answered +OK: a command sent after this returns is seen.
  let started: (() => void) | undefined;
  const ready = new Promise<void>((resolve) => (started = resolve));
  const byStage = new Map<string, { commands: number; scriptCalls: number }>();
  const byCommand = new Map<string, number>();
  const byScript = new Map<string, { calls: number; commandsInside: number }>();
  let commands = 0;
  let scriptCalls = 0;
  // Commands from Lua follow their script's line: they belong to that stage and script.
  let current: { stage: string; script: string } | undefined;
  const stage = (name: string) => byStage.get(name) ?? byStage.set(name, { commands: 0, scriptCalls: 0 }).get(name)!;
  // `stop` sends ECHO <mark> and waits for MONITOR to show it: every command
  // answered before the stop is counted, and the mark is not.
  const mark = `monitor-end-${randomBytes(6).toString('hex')}`;
  let marked: (() => void) | undefined;
  const seen = (args: string[], source: string) => {
    const command = String(args[0] ?? '').toLowerCase();
    if (command === 'echo' && args[1] === mark) return marked?.();
    commands++;
    byCommand.set(command, (byCommand.get(command) ?? 0) + 1);
    if (source === 'lua') {
      if (current) {
        stage(current.stage).commands++;
        byScript.get(current.script)!.commandsInside++;
      }
      return;
    }
    if (command === 'evalsha' || command === 'eval') {
      const known = command === 'evalsha' ? names.get(String(args[1])) : undefined;
      const script = known?.name ?? 'unknown script';
      const queue = known && !known.ours ? queueOf(args.slice(3)) : undefined;
      const where = known?.ours ? (STAGE_OF_SCRIPT[script] ?? 'other') : `BullMQ ${queue ?? 'other'}`;
      current = { stage: where, script: known?.ours ? script : `BullMQ ${script}` };
      scriptCalls++;
      const s = stage(where);
      s.commands++;
      s.scriptCalls++;
      const entry = byScript.get(current.script) ?? byScript.set(current.script, { calls: 0, commandsInside: 0 }).get(current.script)!;
      entry.calls++;
      return;
    }
    current = undefined;
    const queue = queueOf(args.slice(1));
    stage(queue ? `BullMQ ${queue}` : 'other').commands++;
  };
  // `+1796640013.725912 [0 127.0.0.1:34544] "info" "persistence"`, or `[0 lua]` inside a script.
  let buffer = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    let nl: number;
    while ((nl = buffer.indexOf('\r\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 2);
      if (line === '+OK') started?.();
      const m = /^\+[\d.]+ \[\d+ ([^\]]+)\] (.*)$/.exec(line);
      if (!m) continue;
      const args = [...(m[2] as string).matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((a) => a[1] as string);
      seen(args, m[1] === 'lua' ? 'lua' : (m[1] as string));
    }
  });
  await ready;
  return {
    stop: async (notifications) => {
      // No ready check: its INFO would be counted.
      const client = new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: false });
      try {
        const shown = new Promise<void>((resolve) => (marked = resolve));
        await client.echo(mark);
        await Promise.race([shown, new Promise((_, fail) => setTimeout(() => fail(new Error('MONITOR did not show the end mark within 30 s')), 30_000).unref())]);
      } finally {
        client.disconnect();
        socket.destroy();
      }
      const per = (n: number) => Math.round((n / Math.max(1, notifications)) * 100) / 100;
      const sorted = <T>(map: Map<string, T>, key: (v: T) => number) => [...map].sort((a, b) => key(b[1]) - key(a[1]));
      return {
        commands: per(commands),
        scriptCalls: per(scriptCalls),
        byStage: Object.fromEntries(sorted(byStage, (v) => v.commands).map(([k, v]) => [k, { commands: per(v.commands), scriptCalls: per(v.scriptCalls) }])),
        byCommand: Object.fromEntries(sorted(byCommand, (v) => v).map(([k, v]) => [k, per(v)])),
        byScript: Object.fromEntries(sorted(byScript, (v) => v.calls).map(([k, v]) => [k, { calls: per(v.calls), commandsInside: per(v.commandsInside) }])),
      };
    },
  };
}
