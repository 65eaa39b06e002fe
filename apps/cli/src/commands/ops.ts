import type { Command } from 'commander';
import { DigestRecords, DigestStore, DocumentStateStore, FeedbackStore, JournalReader, MessageStore, OperationStore, type DocumentRecord, type KeyBuilder } from '@singleshot/store';
import { connectForCommand } from './queues';
import { keysOf, loadConfigOrExit, retentionMsOf } from '@singleshot/runtime';
import { formatTime, printTable } from '../format';
import { keyArgument } from '../key-arg';
import { lifecycleRows, statusText } from '../lifecycle-rows';
import { digestRows } from '../digest-view';

/** Read-only access to the stores, for operator commands. */
export async function withStores<T>(
  configFile: string | undefined,
  fn: (s: {
    operations: OperationStore;
    messages: MessageStore;
    journal: JournalReader;
    documents: DocumentStateStore;
    feedback: FeedbackStore;
    digests: DigestStore;
    digestRecords: DigestRecords;
    keys: KeyBuilder;
    attempts: number;
  }) => Promise<T>,
): Promise<T> {
  const config = loadConfigOrExit(configFile);
  // With the config's password and TLS, and a clear error when Redis does not answer.
  const redis = await connectForCommand(config);
  const keys = keysOf(config);
  const retentionMs = retentionMsOf(config);
  try {
    return await fn({
      operations: new OperationStore(redis, keys, { retentionMs }),
      messages: new MessageStore(redis, keys, { retentionMs }),
      journal: new JournalReader(redis, keys),
      documents: new DocumentStateStore(redis, keys, { retentionMs }),
      feedback: new FeedbackStore(redis, keys, { retentionMs }),
      digests: new DigestStore(redis, keys, { retentionMs }),
      digestRecords: new DigestRecords(redis, keys, { retentionMs }),
      keys,
      attempts: config.documents.attempts,
    });
  } finally {
    redis.disconnect();
  }
}

export function registerOps(program: Command): void {
  const ops = program.command('ops').description('operations: state, history and journal');
  ops
    .command('show')
    .description('an operation (or every operation of a message key, or a digest and its flush): state, attempts, journal entries')
    .argument('<key>', 'operation, message, digest or document key (64 hex characters)', keyArgument('an operation or message key'))
    .option('--config <file>', 'config file')
    .option('--json', 'print JSON')
    .action(async (key: string, opts: { config?: string; json?: boolean }) => {
      await withStores(opts.config, async ({ operations, messages, journal, documents, feedback, digestRecords, attempts }) => {
        let keysToShow = [key];
        let op = await operations.get(key);
        const message = op ? null : await messages.get(key);
        if (!op && message) keysToShow = message.operations;
        // A digest id is its flush operation's message key: shown as the digest with its flush.
        const digest = await digestRecords.read(op?.messageKey ?? key);
        if (!op && !message && digest?.operationKey) {
          keysToShow = [digest.operationKey];
          op = await operations.get(digest.operationKey);
        }
        const document = op || message || digest ? null : await documents.get(key);
        if (document) {
          const entries = await journal.forOperation(key, document.journalIds);
          if (opts.json) {
            const { job: _job, ...rest } = document;
            console.log(JSON.stringify({ document: rest, journal: entries }, null, 2));
            return;
          }
          console.log(`document ${key}`);
          printTable(documentRows(document, attempts));
          if (entries.length) printTable(entries.map((e) => [e.id, e.type, e.fields.by ?? e.fields.err ?? '']));
          return;
        }
        if (!op && !message && !digest) {
          console.error(`no operation, message or digest with key ${key} (kept for the retention period)`);
          process.exitCode = 4;
          return;
        }
        const shown = [];
        for (const k of keysToShow) {
          const record = await operations.get(k);
          if (!record) continue;
          const [history, entries, waitingOn, delivery] = await Promise.all([
            operations.history(k),
            journal.forOperation(k, record.journalIds),
            record.waitingKey ? documents.get(record.waitingKey) : Promise.resolve(null),
            feedback.read(k),
          ]);
          shown.push({ operation: record, history, journal: entries, ...(waitingOn ? { document: withoutJob(waitingOn) } : {}), ...(delivery ? { feedback: delivery } : {}) });
        }
        if (opts.json) {
          const one = shown[0] ?? null;
          console.log(JSON.stringify(message ? { message, operations: shown } : digest ? { digest, ...one } : one, null, 2));
          return;
        }
        if (digest) printTable(digestRows(digest));
        if (message) {
          console.log(`message ${message.messageKey}: ${message.arrivals} arrival(s) via ${Object.entries(message.via).map(([v, n]) => `${v}×${n}`).join(', ')}; first ${formatTime(message.firstArrivalAt)}`);
        }
        for (const { operation, history, journal: entries, document: waitingOn, feedback: delivery } of shown) {
          console.log(`\noperation ${operation.operationKey}`);
          printTable([
            ['status', statusText(operation)],
            ['recipient', `${operation.recipient ?? ''} (${operation.channel ?? ''})`],
            ['message', operation.messageKey ?? ''],
            ['attempts', String(operation.attempts)],
            ['fence', operation.fence],
            ['provider', operation.provider ?? ''],
            ['external id', operation.externalId ?? ''],
            ['reason', operation.reason ?? ''],
            ['last error', operation.lastErrorCode ? `${operation.lastErrorCode}: ${operation.lastError ?? ''}` : ''],
            ['updated', formatTime(operation.updatedAt)],
            ['waiting', operation.waitingReason ? `${operation.waitingReason} until ${formatTime(operation.waitingUntil)} (not an attempt)` : ''],
            ...lifecycleRows(operation),
          ]);
          if (waitingOn) {
            console.log(`waiting for document ${waitingOn.documentKey}:`);
            printTable(documentRows(waitingOn, attempts));
          }
          if (history.length) {
            console.log('attempts:');
            printTable(history.map((h) => [formatTime(h.at), `#${h.attempt}`, h.outcome, h.provider ?? '', h.externalId ?? h.errorCode ?? '', h.note ?? '']));
          }
          if (entries.length) {
            console.log('journal:');
            printTable(entries.map((e) => [e.id, e.type, e.fields.provider ?? '', e.fields.extId ?? '', e.fields.by ?? '', e.fields.reason ?? '']));
          }
          if (delivery) {
            // Provider feedback, in arrival order (docs/feedback.md); the summary only moves forward.
            console.log(`feedback: ${delivery.status}${delivery.hard ? ' (hard)' : ''}, ${delivery.count} event(s)`);
            printTable(delivery.events.map((e) => [formatTime(e.receivedAt), e.source, e.type + (e.hard ? ' (hard)' : ''), e.providerType, e.eventId, e.detail ?? '']));
          }
        }
      });
    });
}

function withoutJob(doc: DocumentRecord): Omit<DocumentRecord, 'job'> {
  const { job: _job, ...rest } = doc;
  return rest;
}

/** A document's render state as table rows: status, attempts of the budget, last error, next attempt, checksum. */
function documentRows(doc: DocumentRecord, attempts: number): string[][] {
  return [
    ['document status', doc.status],
    ['render attempts', `${doc.attempts} of ${attempts}`],
    ['last error', doc.lastErrorCode ? `${doc.lastErrorCode}: ${doc.lastError ?? ''}` : ''],
    ['next attempt', doc.status === 'failed' ? formatTime(doc.nextAttemptAt) : ''],
    ['checksum', doc.stored?.checksum ?? ''],
    ['file', doc.stored ? `${doc.stored.fileName} (${doc.stored.size} bytes)` : ''],
  ];
}
