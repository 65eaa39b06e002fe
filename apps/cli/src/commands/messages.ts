import type { Command } from 'commander';
import type { MessageRecord } from '@singleshot/store';
import { formatTime, printTable } from '../format';
import { keyArgument } from '../key-arg';
import { statusText } from '../lifecycle-rows';
import { withStores } from './ops';
import { messageDigests } from '../digest-view';

/**
 * A message's cancel tombstone in one cell: which recipients, when, by whom
 * and why (the first cancel's); operations its decision makes later are born
 * cancelled for those recipients.
 */
function tombstoneText(cancelled: MessageRecord['cancelled']): string {
  if (!cancelled) return '';
  const whom = cancelled.recipients === '*' ? 'every recipient' : cancelled.recipients.join(', ');
  return `${whom}, at ${formatTime(cancelled.at)} by ${cancelled.by}${cancelled.reason ? `: ${cancelled.reason}` : ''}`;
}

/** `singleshot messages show KEY`: one message (every arrival of one event) and the operations it fanned out to. */
export function registerMessages(program: Command): void {
  const messages = program.command('messages').description('messages: arrivals of one event and its operations');
  messages
    .command('show')
    .description('a message by its key: arrivals per source, decision, and each operation with its state')
    .argument('<key>', 'message key (64 hex characters)', keyArgument('a message key'))
    .option('--config <file>', 'config file')
    .option('--json', 'print JSON')
    .action(async (key: string, opts: { config?: string; json?: boolean }) => {
      await withStores(opts.config, async ({ operations, messages: store, digests, digestRecords }) => {
        const message = await store.get(key);
        if (!message) {
          console.error(`no message with key ${key} (kept for the retention period)`);
          process.exitCode = 4;
          return;
        }
        const ops = await Promise.all(
          message.operations.map(async (operationKey) => ({ operationKey, record: await operations.get(operationKey) })),
        );
        const inDigests = await messageDigests(message, { digests, records: digestRecords, operations });
        if (opts.json) {
          const { digests: _groups, ...rest } = message;
          console.log(
            JSON.stringify({ message: rest, operations: ops.map(({ operationKey, record }) => record ?? { operationKey, status: 'unclaimed' }), digests: inDigests }, null, 2),
          );
          return;
        }
        console.log(`message ${message.messageKey}`);
        printTable([
          ['tenant', message.tenant],
          ['arrivals', `${message.arrivals} (${Object.entries(message.via).map(([via, n]) => `${via}×${n}`).join(', ')})`],
          ['first arrival', `${formatTime(message.firstArrivalAt)}${message.firstVia ? ` via ${message.firstVia}` : ''}`],
          ['last arrival', formatTime(message.lastArrivalAt)],
          ['queued', formatTime(message.queuedAt)],
          ['decided', message.decidedAt === undefined ? 'not yet' : formatTime(message.decidedAt)],
          ['cancelled', tombstoneText(message.cancelled)],
        ]);
        if (inDigests.length > 0) {
          console.log('\ndigests:');
          printTable([
            ['DIGEST', 'ROUTE', 'RECIPIENT', 'KEY', 'STATE', ''],
            ...inDigests.map((d) => [d.id ?? '', d.route, d.recipient, d.key, d.state, d.detail]),
          ]);
          if (ops.length === 0) {
            console.log(`\na digest's members and flush: singleshot ops show <digest>`);
            return;
          }
        }
        if (ops.length === 0) {
          console.log(message.decidedAt === undefined ? '\nno operations yet (not decided)' : '\nno operations (no route matched, or no recipients)');
          return;
        }
        console.log('\noperations:');
        printTable([
          ['OPERATION', 'STATUS', 'RECIPIENT', 'CHANNEL', 'PROVIDER', 'EXTERNAL ID', 'UPDATED'],
          ...ops.map(({ operationKey, record }) => [
            operationKey,
            // Decided, but no delivery worker has claimed it yet.
            record ? statusText(record) : 'unclaimed',
            record?.recipient ?? '',
            record?.channel ?? '',
            record?.provider ?? '',
            record?.externalId ?? '',
            formatTime(record?.updatedAt),
          ]),
        ]);
        console.log(`\ndetails: singleshot ops show <operation>`);
      });
    });
}
