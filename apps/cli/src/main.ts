import { Command } from 'commander';
import { singleshotVersion } from './version';
import { registerOps } from './commands/ops';
import { registerJournal } from './commands/journal';
import { registerMessages } from './commands/messages';
import { registerQueues } from './commands/queues';
import { registerDlq } from './commands/dlq';
import { registerCancel } from './commands/cancel';
import { registerSuppressions } from './commands/suppressions';
import { registerLoadtest } from './commands/loadtest';
import { registerStory } from './commands/story';

const program = new Command()
  .name('singleshot')
  .description('One notification per operation, whatever arrives how many times.')
  .version(singleshotVersion(), '-V, --version', 'print the version')
  .showHelpAfterError();

program
  .command('start')
  .description('run some or all apps (embedded mode): one process per core (at most 3), one command')
  .option('--only <apps>', 'comma-separated: ingest,decision,render,delivery,dashboard (default: all)')
  .option('--processes <n>', 'processes to spread the apps over: 1 = all in this process, 2 = ingest | workers, 3 = ingest | decision | delivery (default: one per core, at most 3)')
  .option('--config <file>', 'config file (YAML or JSON); default $SINGLESHOT_CONFIG or ./singleshot.config.yaml')
  // Loaded only for `start`: the other commands never pay for the apps, and an app process loads only its own.
  .action(async (opts: { only?: string; config?: string; processes?: string }) => (await import('./commands/start')).startCommand(opts));

registerOps(program);
registerMessages(program);
registerJournal(program);
registerQueues(program);
registerDlq(program);
registerCancel(program);
registerSuppressions(program);
registerStory(program);

// One benchmark: `npm run bench` (bench/), not a second one here.
registerLoadtest(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
