import type { Command } from 'commander';
import type { z } from 'zod';
import { OperatorSuppressions, SuppressionInputError, suppressionAddSchema, suppressionRemoveSchema, type RecipientView } from '@singleshot/intake';
import { SuppressionList, Suppressions } from '@singleshot/store';
import { keysOf, loadConfigOrExit, retentionMsOf } from '@singleshot/runtime';
import { formatTime, printTable } from '../format';
import { operatorName } from '../operator';
import { connectForCommand } from './queues';

interface CommonOptions {
  config?: string;
  json?: boolean;
}
interface ChangeOptions extends CommonOptions {
  channel?: string;
  category?: string;
  reason?: string;
  expires?: string;
  by?: string;
}

/** A command line that names nothing usable: printed, exit 2, Redis never touched. */
class UsageError extends Error {}

/** The admin API's body schema, so the CLI refuses exactly what the dashboard refuses. */
function parseFlags<S extends z.ZodType>(schema: S, input: Record<string, unknown>): z.output<S> {
  const result = schema.safeParse(Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)));
  if (result.success) return result.data;
  const flag: Record<string, string> = { expiresAt: '--expires', recipient: 'RECIPIENT' };
  throw new UsageError(result.error.issues.map((i) => `${i.path.map((p) => flag[String(p)] ?? `--${String(p)}`).join('.') || 'input'}: ${i.message}`).join('; '));
}

function positiveInt(value: string | undefined, name: string, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > max) throw new UsageError(`${name} must be an integer up to ${max}, not "${value}"`);
  return Number(value);
}

/** Runs one subcommand with an OperatorSuppressions on the config's Redis; usage errors exit 2, refused input too. */
async function withSuppressions(command: string, opts: CommonOptions, work: (admin: OperatorSuppressions) => Promise<void>, check: () => void = () => {}): Promise<void> {
  try {
    check();
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`singleshot suppressions ${command}: ${err.message}`);
    process.exitCode = 2;
    return;
  }
  const config = loadConfigOrExit(opts.config);
  const redis = await connectForCommand(config);
  try {
    const store = new Suppressions(redis, keysOf(config), { retentionMs: retentionMsOf(config) });
    await work(new OperatorSuppressions(store, new SuppressionList(redis, keysOf(config)), { channels: Object.keys(config.providers) }));
  } catch (err) {
    if (!(err instanceof SuppressionInputError || err instanceof UsageError)) throw err;
    console.error(`singleshot suppressions ${command}: ${err.message}`);
    process.exitCode = 2;
  } finally {
    redis.disconnect();
  }
}

function printRecipients(views: RecipientView[]): void {
  const rows = views.flatMap((v) => [
    ...v.suppressions.map((s) => [v.recipient, s.channel, s.category ?? '*', s.expired ? `${s.reason} (expired)` : s.reason, s.origin, s.by, formatTime(s.at), formatTime(s.expiresAt)]),
    ...v.optOuts.map((o) => [v.recipient, o.channel ?? '*', o.category ?? '*', 'opted out', 'preferences', o.by, formatTime(o.at), '']),
  ]);
  if (rows.length === 0) return void console.log('no suppressions');
  printTable([['RECIPIENT', 'CHANNEL', 'CATEGORY', 'REASON', 'ORIGIN', 'BY', 'AT', 'EXPIRES'], ...rows]);
}

/** `cli:<name>`, as `singleshot cancel` and `dlq replay` record an operator. */
const byOf = (opts: ChangeOptions) => `cli:${opts.by ?? operatorName()}`;

/**
 * `singleshot suppressions list|show|add|remove` (docs/cli.md): the suppression
 * list straight on Redis, with the same checks as the dashboard's admin API
 * (libs/intake's OperatorSuppressions), origin `operator`, by `cli:<user@host>`.
 */
export function registerSuppressions(program: Command): void {
  const group = program.command('suppressions').description('the suppression list: recipients no operation of a channel is sent to (docs/feedback.md)');

  group
    .command('list')
    .description('recipients with a suppression that holds or an opt-out, newest on the list first')
    .option('--limit <n>', 'recipients per page (1..1000, default 100)')
    .option('--cursor <cursor>', 'the next page: the cursor the previous page printed')
    .option('--offset <n>', 'refused: the list is paged by --cursor')
    .option('--config <file>', 'config file')
    .option('--json', 'print JSON')
    .action(async (opts: CommonOptions & { limit?: string; cursor?: string; offset?: string }) => {
      let limit = 0;
      await withSuppressions('list', opts, async (admin) => {
        const page = await admin.list(opts.cursor, limit);
        if (opts.json) return void console.log(JSON.stringify(page, null, 2));
        printRecipients(page.recipients);
        if (page.nextCursor !== null) console.log(`more: --cursor ${page.nextCursor}`);
      }, () => {
        if (opts.offset !== undefined) throw new UsageError('--offset is gone: the list is paged by --cursor (the one the previous page printed)');
        limit = positiveInt(opts.limit, '--limit', 100, 1000);
      });
    });

  group
    .command('show <recipient>')
    .description("a recipient's suppressions and opt-outs")
    .option('--config <file>', 'config file')
    .option('--json', 'print JSON')
    .action(async (recipient: string, opts: CommonOptions) => {
      await withSuppressions('show', opts, async (admin) => {
        const view = await admin.get(recipient);
        if (opts.json) return void console.log(JSON.stringify(view, null, 2));
        printRecipients([view]);
      }, () => {
        if (!recipient.trim()) throw new UsageError('RECIPIENT must not be empty');
      });
    });

  group
    .command('add <recipient>')
    .description('suppress a recipient on a channel: no claim after this returns sends to them')
    .option('--channel <channel>', 'the channel (required; one of the configured ones)')
    .option('--category <category>', 'only this category (default: all)')
    .option('--reason <text>', 'why, for the audit (required)')
    .option('--expires <when>', 'when it stops holding: ISO 8601 with a zone or epoch ms (default: until removed)')
    .option('--by <name>', 'who, for the audit (default: user@host); recorded as cli:<name>')
    .option('--config <file>', 'config file')
    .option('--json', 'print JSON')
    .action(async (recipient: string, opts: ChangeOptions) => {
      let entry: z.output<typeof suppressionAddSchema> | undefined;
      await withSuppressions('add', opts, async (admin) => {
        const added = await admin.add(entry!, byOf(opts));
        const view = await admin.get(entry!.recipient);
        if (opts.json) return void console.log(JSON.stringify({ added, by: byOf(opts), recipient: view }, null, 2));
        console.log(added ? 'suppressed' : 'already suppressed (the first one stands)');
        printRecipients([view]);
      }, () => {
        const expiresAt = opts.expires !== undefined && /^\d+$/.test(opts.expires) ? Number(opts.expires) : opts.expires;
        entry = parseFlags(suppressionAddSchema, { channel: opts.channel, recipient, category: opts.category, reason: opts.reason, expiresAt });
      });
    });

  group
    .command('remove <recipient>')
    .description('remove a suppression: later operations may be sent; nothing it stopped is sent again')
    .option('--channel <channel>', 'the channel (required)')
    .option('--category <category>', 'the category it was added for (default: the one for all categories)')
    .option('--by <name>', 'who, for the audit (default: user@host); recorded as cli:<name>')
    .option('--config <file>', 'config file')
    .option('--json', 'print JSON')
    .action(async (recipient: string, opts: ChangeOptions) => {
      let entry: z.output<typeof suppressionRemoveSchema> | undefined;
      await withSuppressions('remove', opts, async (admin) => {
        const removed = await admin.remove(entry!, byOf(opts));
        if (opts.json) return void console.log(JSON.stringify({ removed, by: byOf(opts), recipient: await admin.get(entry!.recipient) }, null, 2));
        console.log(removed ? 'removed' : 'no such suppression');
      }, () => {
        entry = parseFlags(suppressionRemoveSchema, { channel: opts.channel, recipient, category: opts.category });
      });
    });
}
