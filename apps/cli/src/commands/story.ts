import type { Command } from 'commander';
import { openQueues } from '@singleshot/queues';
import { JournalReader, MessageStore, OperationStore } from '@singleshot/store';
import { keysOf, loadConfigOrExit, retentionMsOf } from '@singleshot/runtime';
import { readStory, storyText } from '@singleshot/story';
import { keyArgument } from '../key-arg';
import { connectForCommand } from './queues';

/**
 * `singleshot story KEY`: the whole story of a message or operation, in text
 * (the dashboard's `/admin/story/KEY` shows the same story, built by the same
 * function): arrivals, decision, claims, attempts, provider answers,
 * reconciliations, the DLQ, replays and journal entries, oldest first.
 */
export function registerStory(program: Command): void {
  program
    .command('story')
    .description('everything that happened to a message or an operation, on one time axis (with its trace id)')
    .argument('<key>', 'message or operation key (64 hex characters)', keyArgument('a message or operation key'))
    .option('--config <file>', 'config file')
    .option('--json', 'print JSON')
    .action(async (key: string, opts: { config?: string; json?: boolean }) => {
      const config = loadConfigOrExit(opts.config);
      const redis = await connectForCommand(config);
      const keys = keysOf(config);
      const retentionMs = retentionMsOf(config);
      const queues = openQueues(redis, keys);
      try {
        const story = await readStory(
          {
            operations: new OperationStore(redis, keys, { retentionMs }),
            messages: new MessageStore(redis, keys, { retentionMs }),
            journal: new JournalReader(redis, keys),
            deadRecord: async (operationKey) => (await queues.dead.getJob(operationKey))?.data ?? null,
            routes: config.routes,
          },
          key,
        );
        if (!story) {
          console.error(`no message or operation with key ${key} (kept for the retention period)`);
          process.exitCode = 4;
          return;
        }
        console.log(opts.json ? JSON.stringify(story, null, 2) : storyText(story).join('\n'));
      } finally {
        await queues.close();
        redis.disconnect();
      }
    });
}
