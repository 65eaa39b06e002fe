import type { Command } from 'commander';
import { TENANT_ID, eventMessageKey, tenantKey } from '@singleshot/core';
import { carryOutCancel, type CancelPort } from '@singleshot/intake';
import { Cancellations, MessageStore, type MessageCancel } from '@singleshot/store';
import { keysOf, loadConfigOrExit, replicaWaitsOf, retentionMsOf } from '@singleshot/runtime';
import { printTable } from '../format';
import { operatorName } from '../operator';
import { connectForCommand } from './queues';

/** `singleshot cancel`'s options, as commander hands them over. */
export interface CancelOptions {
  source?: string;
  id?: string;
  message?: string;
  key?: string;
  tenant?: string;
  recipient?: string[];
  reason?: string;
  by?: string;
  config?: string;
  json?: boolean;
}

/** What a cancel names, or why the command line names nothing usable. */
export type CliCancelTarget =
  | { kind: 'message'; messageKey: string }
  | { kind: 'key'; source: string; cancellationKey: string; tenant?: string }
  | { kind: 'usage'; message: string };

const MESSAGE_KEY = /^[0-9a-f]{64}$/i;

/**
 * The one target of a cancel, as `POST /v1/cancellations` takes it: a message
 * key, an event by source and id, or a source's cancellation key. The
 * operator may name any source (the CLI holds Redis' own credentials), but a
 * source must go with an id or a key, and a message key with neither. Ids
 * and cancellation keys are `--tenant`'s (docs/tenants.md), by default the
 * default tenant's.
 */
export function cancelTargetOf(opts: Pick<CancelOptions, 'source' | 'id' | 'message' | 'key' | 'tenant'>): CliCancelTarget {
  if (opts.tenant !== undefined && !TENANT_ID.test(opts.tenant)) return { kind: 'usage', message: `"${opts.tenant}" is not a tenant id: lower-case letters, digits, _ and -, at most 64` };
  if (opts.tenant !== undefined && opts.message !== undefined) return { kind: 'usage', message: '--message names a message already: leave out --tenant' };
  const named = [opts.message, opts.id, opts.key].filter((v) => v !== undefined).length;
  if (named !== 1) return { kind: 'usage', message: 'give exactly one target: --message KEY, --source S --id ID, or --source S --key CANCELLATION_KEY' };
  if (opts.message !== undefined) {
    if (opts.source !== undefined) return { kind: 'usage', message: '--message names a message already: leave out --source' };
    const key = opts.message.trim();
    if (!MESSAGE_KEY.test(key)) return { kind: 'usage', message: `"${opts.message}" is not a message key: a key is 64 hex characters (e.g. the messageKey ingest answered)` };
    return { kind: 'message', messageKey: key.toLowerCase() };
  }
  const source = opts.source?.trim();
  if (!source) return { kind: 'usage', message: `--${opts.id !== undefined ? 'id' : 'key'} needs --source: ids and cancellation keys belong to one source` };
  if (opts.id !== undefined) {
    if (opts.id === '') return { kind: 'usage', message: '--id must not be empty' };
    return { kind: 'message', messageKey: tenantKey(opts.tenant, eventMessageKey(source, opts.id)) };
  }
  if (!opts.key) return { kind: 'usage', message: '--key must not be empty' };
  return { kind: 'key', source, cancellationKey: opts.key, ...(opts.tenant !== undefined ? { tenant: opts.tenant } : {}) };
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

async function cancelCommand(opts: CancelOptions): Promise<void> {
  const target = cancelTargetOf(opts);
  if (target.kind === 'usage') {
    console.error(`singleshot cancel: ${target.message}`);
    process.exitCode = 2;
    return;
  }
  const recipients = opts.recipient?.length ? opts.recipient : undefined;
  // The same identity a replay journals, marked as the CLI's.
  const who = { by: `cli:${opts.by ?? operatorName()}`, reason: opts.reason ?? '' };
  const config = loadConfigOrExit(opts.config);
  const redis = await connectForCommand(config);
  try {
    const keys = keysOf(config);
    // As at ingest: the answer is definite only once what the cancel wrote is on a replica (none on one Redis).
    const port: CancelPort = {
      store: new Cancellations(redis, keys, { retentionMs: retentionMsOf(config) }),
      messages: new MessageStore(redis, keys, { retentionMs: retentionMsOf(config) }),
      replicas: replicaWaitsOf(config, redis),
    };
    // The CLI is an operator's (it holds the Redis credentials): its targets name no owner, so a cancel is always carried out.
    const done = (await carryOutCancel(port, target, recipients, who)) as MessageCancel;
    if (opts.json) {
      console.log(JSON.stringify({ by: who.by, operations: done.operations, pending: done.pending }, null, 2));
      return;
    }
    if (done.operations.length > 0) {
      printTable([
        ['OPERATION', 'RECIPIENT', 'CHANNEL', 'OUTCOME'],
        ...done.operations.map((o) => [o.operationKey, o.recipient, o.channel, o.outcome]),
      ]);
    } else {
      console.log('no operations yet');
    }
    console.log(`pending: ${done.pending ? 'yes (operations still to come are born cancelled)' : 'no'}`);
  } finally {
    redis.disconnect();
  }
}

/** `singleshot cancel`: the producer's cancel (docs/scheduling.md), by an operator, straight on Redis. */
export function registerCancel(program: Command): void {
  program
    .command('cancel')
    .description('cancel an event (or some of its recipients), a message, or every event of a cancellation key; prints what happened to each operation')
    .option('--source <source>', 'the source of the event (with --id) or of the cancellation key (with --key)')
    .option('--id <id>', "the event's id (with --source)")
    .option('--message <key>', 'a message key (64 hex characters)')
    .option('--key <cancellationKey>', 'a cancellation key of --source: every event that carries it, now and for the retention period')
    .option('--tenant <tenant>', "the tenant whose event id or cancellation key it is (docs/tenants.md; default: the default tenant's)")
    .option('--recipient <recipient>', 'cancel only this recipient (repeat for several; default: all)', collect)
    .option('--reason <text>', 'why, for the journal')
    .option('--by <name>', 'who cancels, for the journal (default: user@host); recorded as cli:<name>')
    .option('--config <file>', 'config file')
    .option('--json', 'print JSON')
    .action(cancelCommand);
}
