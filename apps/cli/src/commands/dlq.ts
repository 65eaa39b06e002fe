import { InvalidArgumentError, type Command } from 'commander';
import { keyArgument } from '../key-arg';
import type { RedisClient } from '@singleshot/store';
import type { Config } from '@singleshot/config';
import {
  listDead,
  listSuppressedOperations,
  openQueues,
  replayMany,
  type Queues,
  type ReplayDeps,
  type ReplayResult,
} from '@singleshot/queues';
import { JournalReader, OperationStore } from '@singleshot/store';
import { keysOf, loadConfigOrExit, retentionMsOf } from '@singleshot/runtime';
import { formatTime, printTable } from '../format';
import { connectForCommand } from './queues';
import { operatorName } from '../operator';

interface DlqContext extends ReplayDeps {
  config: Config;
  queues: Queues;
  operations: OperationStore;
  journal: JournalReader;
}

async function withDlq<T>(configFile: string | undefined, fn: (ctx: DlqContext) => Promise<T>): Promise<T> {
  const config = loadConfigOrExit(configFile);
  const redis: RedisClient = await connectForCommand(config);
  const keys = keysOf(config);
  const retentionMs = retentionMsOf(config);
  const queues = openQueues(redis, keys);
  try {
    return await fn({
      config,
      redis,
      keys,
      queues,
      retentionMs,
      operations: new OperationStore(redis, keys, { retentionMs }),
      journal: new JournalReader(redis, keys),
    });
  } finally {
    await queues.close().catch(() => undefined);
    redis.disconnect();
  }
}

const OPERATION_KEY = /^[0-9a-f]{64}$/;

function operationKeyArg(value: string): string {
  const key = value.trim().toLowerCase();
  if (!OPERATION_KEY.test(key)) throw new InvalidArgumentError(`"${value}" is not an operation key (64 hex digits)`);
  return key;
}

function short(text: string | undefined, max = 60): string {
  if (!text) return '';
  const one = text.replace(/\s+/g, ' ');
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

function describeResult(r: ReplayResult): [string, string] {
  switch (r.result) {
    case 'replayed':
      return ['replayed', `was ${r.from}; deliver job ${r.job}`];
    case 'already_sent':
      return ['already sent', `by ${r.provider || '?'} (id ${r.externalId || '?'}); nothing sent`];
    case 'not_replayable':
      return ['not replayable', `still ${r.status}: it is being delivered`];
    case 'not_found':
      return ['not found', 'no operation state (never claimed, or past retention)'];
  }
}

interface ListOptions {
  config?: string;
  json?: boolean;
  filter?: string;
  suppressed?: boolean;
  limit?: number;
}

async function list(opts: ListOptions): Promise<void> {
  await withDlq(opts.config, async (ctx) => {
    const limit = opts.limit ?? 1000;
    if (opts.suppressed) {
      const rows = await listSuppressedOperations(ctx, { ...(opts.filter ? { filter: opts.filter } : {}), limit });
      if (opts.json) return void console.log(JSON.stringify({ suppressed: rows }, null, 2));
      if (rows.length === 0) return void console.log('no suppressed operations');
      printTable([
        ['SUPPRESSED', 'OPERATION', 'CHANNEL', 'RECIPIENT', 'REASON', 'DETAIL'],
        ...rows.map((r) => [formatTime(r.suppressedAt), r.operationKey, r.channel ?? '', r.recipient ?? '', r.reason ?? '', short(r.error)]),
      ]);
      console.log(`\n${rows.length} suppressed operation(s); replay with: singleshot dlq replay ID… | --all --suppressed`);
      return;
    }
    const rows = await listDead(ctx.queues, { ...(opts.filter ? { filter: opts.filter } : {}), limit });
    if (opts.json) return void console.log(JSON.stringify({ dead: rows }, null, 2));
    if (rows.length === 0) return void console.log(opts.filter ? `no dead operations match "${opts.filter}"` : 'the DLQ is empty');
    printTable([
      ['DIED', 'OPERATION', 'CHANNEL', 'RECIPIENT', 'REASON', 'ERROR', 'ATTEMPTS'],
      ...rows.map((r) => {
        const job = r.job as { channel?: string; recipient?: string };
        return [formatTime(r.diedAt), r.operationKey, job.channel ?? '', job.recipient ?? '', r.reason, short(`${r.error.code}: ${r.error.message}`, 50), String(r.attempts.length)];
      }),
    ]);
    console.log(`\n${rows.length} dead operation(s); details: singleshot dlq show ID; replay: singleshot dlq replay ID…`);
  });
}

async function show(key: string, opts: { config?: string; json?: boolean }): Promise<void> {
  await withDlq(opts.config, async (ctx) => {
    const [record, state, history] = await Promise.all([
      ctx.queues.dead.getJob(key),
      ctx.operations.get(key),
      ctx.operations.history(key),
    ]);
    if (!record && !state) {
      console.error(`no DLQ record and no operation state for ${key}`);
      process.exitCode = 4;
      return;
    }
    const journal = state ? await ctx.journal.forOperation(key, state.journalIds) : [];
    if (opts.json) {
      console.log(JSON.stringify({ dead: record?.data ?? null, operation: state, history, journal }, null, 2));
      return;
    }
    const job = (record?.data.job ?? {}) as Record<string, unknown>;
    console.log(`operation ${key}`);
    printTable([
      ['status', state?.status ?? '(state expired)'],
      ['in the DLQ', record ? `yes, since ${formatTime(record.data.diedAt)}` : 'no'],
      ['reason', record?.data.reason ?? state?.reason ?? ''],
      ['error', record ? `${record.data.error.code}: ${record.data.error.message}` : state?.lastErrorCode ? `${state.lastErrorCode}: ${state.lastError ?? ''}` : ''],
      ['recipient', `${String(job.recipient ?? state?.recipient ?? '')} (${String(job.channel ?? state?.channel ?? '')})`],
      ['message', String(job.messageKey ?? state?.messageKey ?? '')],
      ['route / action', job.route ? `${String(job.route)} / ${String(job.action)}` : ''],
      ['subject', short(typeof job.subject === 'string' ? job.subject : '', 100)],
      ['text', short(typeof job.text === 'string' ? job.text : '', 100)],
      ['attempts', String(state?.attempts ?? '')],
      ['replays', state?.replays ? `${state.replays} (last by ${state.replayedBy ?? '?'} at ${formatTime(state.replayedAt)})` : '0'],
    ]);
    if (history.length) {
      console.log('history:');
      printTable(history.map((h) => [formatTime(h.at), `#${h.attempt}`, h.step ?? 'send', h.outcome, h.provider ?? h.by ?? '', h.externalId ?? h.errorCode ?? '', h.durationMs !== undefined ? `${h.durationMs} ms` : '', short(h.note ?? h.error, 60)]));
    }
    if (journal.length) {
      console.log('journal:');
      printTable(journal.map((e) => [e.id, e.type, e.fields.provider || e.fields.by || '', e.fields.extId || e.fields.via || '', e.fields.reason ?? '']));
    }
  });
}

interface ReplayOptions extends ListOptions {
  all?: boolean;
  by?: string;
}

async function replayCommand(ids: string[], opts: ReplayOptions): Promise<void> {
  if (ids.length > 0 && (opts.all || opts.filter)) throw new InvalidArgumentError('give operation keys, or --all / --filter, not both');
  if (ids.length === 0 && !opts.all && !opts.filter) throw new InvalidArgumentError('nothing to replay: give operation keys, --all or --filter <reason|channel>');
  await withDlq(opts.config, async (ctx) => {
    let keys = ids.map(operationKeyArg);
    if (keys.length === 0) {
      const filter = opts.filter ? { filter: opts.filter } : {};
      keys = opts.suppressed
        ? (await listSuppressedOperations(ctx, { ...filter, limit: opts.limit ?? 100_000 })).map((r) => r.operationKey)
        : (await listDead(ctx.queues, { ...filter, ...(opts.limit ? { limit: opts.limit } : {}) })).map((r) => r.operationKey);
    }
    if (keys.length === 0) {
      if (opts.json) console.log(JSON.stringify({ results: [] }, null, 2));
      else console.log(opts.suppressed ? 'no suppressed operations to replay' : 'no dead operations to replay');
      return;
    }
    const who = { by: opts.by ?? operatorName(), via: 'cli' };
    const results = await replayMany(keys, who, ctx, (r) => {
      if (opts.json) return;
      const [label, detail] = describeResult(r);
      console.log(`  ${label.padEnd(14)}  ${r.operationKey}  ${detail}`);
    });
    const counts: Record<string, number> = {};
    for (const r of results) counts[r.result] = (counts[r.result] ?? 0) + 1;
    if (opts.json) console.log(JSON.stringify({ by: who.by, via: who.via, results }, null, 2));
    else console.log(`\n${Object.entries(counts).map(([k, n]) => `${n} ${k.replace('_', ' ')}`).join(', ')} (by ${who.by})`);
    if (results.some((r) => r.result === 'not_found' || r.result === 'not_replayable')) process.exitCode = 1;
  });
}

function limitArg(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected an integer >= 1');
  return n;
}

/** `singleshot dlq list|show|replay`: dead (and suppressed) operations and their replay. */
export function registerDlq(program: Command): void {
  const dlq = program.command('dlq').description('dead operations (the DLQ) and suppressed ones: list, show, replay');
  dlq
    .command('list')
    .description('dead operations, oldest first (with --suppressed: suppressed ones, newest first)')
    .option('--config <file>', 'config file')
    .option('--filter <reason|channel>', 'only records with this reason, error code or channel')
    .option('--suppressed', 'list suppressed operations (rate limit) instead of dead ones')
    .option('--limit <n>', 'at most n rows', limitArg)
    .option('--json', 'print JSON')
    .action(list);
  dlq
    .command('show')
    .description('one dead operation: reason, error, rendered content, every attempt, journal')
    .argument('<key>', 'operation key (64 hex characters)', keyArgument('an operation key'))
    .option('--config <file>', 'config file')
    .option('--json', 'print JSON')
    .action(show);
  dlq
    .command('replay [keys...]')
    .description('send dead (or suppressed) operations again under the same operation key; a sent one is reported "already sent"')
    .option('--config <file>', 'config file')
    .option('--all', 'every dead operation (with --suppressed: every suppressed one)')
    .option('--filter <reason|channel>', 'every dead operation with this reason, error code or channel')
    .option('--suppressed', 'with --all/--filter: replay suppressed operations (they skip the rate limit once)')
    .option('--limit <n>', 'with --all/--filter: at most n operations', limitArg)
    .option('--by <name>', 'who replays, for the journal (default: user@host)')
    .option('--json', 'print JSON')
    .action(replayCommand);
}
