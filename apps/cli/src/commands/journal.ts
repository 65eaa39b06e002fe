import { InvalidArgumentError, type Command } from 'commander';
import type { RedisClient } from '@singleshot/store';
import { JournalReader, compareStreamIds, type JournalEntry, type KeyBuilder } from '@singleshot/store';
import { keysOf, loadConfigOrExit } from '@singleshot/runtime';
import { formatTime, printTable } from '../format';
import { connectForCommand } from './queues';

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * `--since`: an ISO 8601 date-time (`2025-01-31T12:00:00Z`) or a duration back
 * from now (`90s`, `15m`, `2h`, `7d`, or combined: `1h30m`). Returns epoch ms.
 */
export function parseSince(value: string, now = Date.now()): number {
  const duration = value.trim().toLowerCase();
  if (/^(\d+(ms|s|m|h|d|w))+$/.test(duration)) {
    let ms = 0;
    for (const [, n, unit] of duration.matchAll(/(\d+)(ms|s|m|h|d|w)/g)) ms += Number(n) * (UNITS[unit as string] as number);
    return now - ms;
  }
  if (/^\d{4}-\d{2}-\d{2}([T ][\d:.]+)?(Z|[+-]\d{2}:?\d{2})?$/i.test(value.trim())) {
    const at = Date.parse(value.trim());
    if (!Number.isNaN(at)) return at;
  }
  throw new InvalidArgumentError('expected an ISO 8601 date-time (2025-01-31T12:00:00Z) or a duration such as 90s, 15m, 2h, 7d');
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100_000) throw new InvalidArgumentError('expected an integer from 1 to 100000');
  return n;
}

/** Fields every entry has, shown in their own columns; the rest go to DETAILS. */
const COLUMNS = new Set(['type', 'ts', 'op', 'recipient', 'channel']);

function detailsOf(e: JournalEntry): string {
  return Object.entries(e.fields)
    .filter(([k, v]) => !COLUMNS.has(k) && v !== '')
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
}

function rowOf(e: JournalEntry): string[] {
  const f = e.fields;
  return [formatTime(e.ts), e.type, f.op ?? '', [f.recipient, f.channel].filter(Boolean).join(' '), detailsOf(e)];
}

const HEADER = ['TIME', 'TYPE', 'OPERATION', 'RECIPIENT', 'DETAILS'];

/** `singleshot journal tail [--follow] [--since] [--limit]`: journal entries over every shard, newest last. */
export function registerJournal(program: Command): void {
  const journal = program.command('journal').description('the durable journal: sent, in doubt, dead, suppressed, duplicates, replays');
  journal
    .command('tail')
    .description('the newest journal entries, newest last; --follow keeps printing new ones')
    .option('--since <when>', 'only entries since an ISO date-time or a duration ago (15m, 2h, 7d)', (v) => parseSince(v))
    .option('--limit <n>', 'at most this many entries (the newest)', positiveInt, 20)
    .option('-f, --follow', 'keep printing new entries until interrupted')
    .option('--config <file>', 'config file')
    .option('--json', 'one JSON object per line')
    .action(async (opts: { since?: number; limit: number; follow?: boolean; config?: string; json?: boolean }) => {
      const config = loadConfigOrExit(opts.config);
      const keys = keysOf(config);
      const redis = await connectForCommand(config);
      const reader = new JournalReader(redis, keys);
      const print = (entries: JournalEntry[], header: boolean) => {
        if (opts.json) for (const e of entries) console.log(JSON.stringify(e));
        else if (entries.length > 0) printTable(header ? [HEADER, ...entries.map(rowOf)] : entries.map(rowOf));
      };
      try {
        // Each shard's last id before the tail is read: following starts there, so an entry
        // written between the two reads is printed once, not zero or two times.
        const lastIds = await Promise.all(
          keys.allJournals().map(async (key) => ((await redis.xrevrange(key, '+', '-', 'COUNT', 1))[0]?.[0] ?? '0-0') as string),
        );
        // The newest `limit` overall, then those since `--since`: the newest `limit` since then.
        const entries = (await reader.tail(opts.limit)).filter((e) => opts.since === undefined || e.ts >= opts.since);
        print(entries, true);
        if (!opts.follow) {
          if (entries.length === 0 && !opts.json) console.error('no journal entries' + (opts.since !== undefined ? ` since ${formatTime(opts.since)}` : ''));
          return;
        }
        const after = new Map<number, string>();
        lastIds.forEach((id, shard) => after.set(shard, id));
        for (const e of entries) if (compareStreamIds(e.id, after.get(e.shard) ?? '0-0') > 0) after.set(e.shard, e.id);
        await follow(await connectForCommand(config, 'worker'), keys, after, (batch) => print(batch, false));
      } finally {
        redis.disconnect();
      }
    });
}

/** Prints new entries as they come (XREAD BLOCK on its own connection) until SIGINT/SIGTERM. */
async function follow(blocking: RedisClient, keys: KeyBuilder, after: Map<number, string>, print: (e: JournalEntry[]) => void): Promise<void> {
  const reader = new JournalReader(blocking, keys);
  let stopped = false;
  const stop = () => {
    stopped = true;
    blocking.disconnect();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    while (!stopped) {
      try {
        print(await reader.follow(after, 5_000));
      } catch (err) {
        if (stopped) break;
        throw err;
      }
    }
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    blocking.disconnect();
  }
}
