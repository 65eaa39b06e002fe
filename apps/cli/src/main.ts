import { Command, InvalidArgumentError } from 'commander';
import { startCommand } from './commands/start';
import { registerOps } from './commands/ops';
import { registerJournal } from './commands/journal';
import { registerMessages } from './commands/messages';
import { registerQueues } from './commands/queues';
import { registerDlq } from './commands/dlq';
import { formatReport, runLoadtest } from './loadtest/run';

function int(name: string, min: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be an integer >= ${min}`);
    return n;
  };
}

const program = new Command()
  .name('singleshot')
  .description('One notification per operation, whatever arrives how many times.')
  .showHelpAfterError();

program
  .command('start')
  .description('run some or all apps in this process (embedded mode)')
  .option('--only <apps>', 'comma-separated: ingest,decision,delivery,dashboard (default: all)')
  .option('--config <file>', 'config file (YAML or JSON); default $SINGLESHOT_CONFIG or ./singleshot.config.yaml')
  .action(startCommand);

registerOps(program);
registerMessages(program);
registerJournal(program);
registerQueues(program);
registerDlq(program);

program
  .command('loadtest')
  .description('parallel duplicate deliveries against a running fleet, counted at a sink it starts itself')
  .option('--url <url>', 'ingest base URL', 'http://127.0.0.1:8080')
  .option('--events <n>', 'distinct events', int('--events', 1), 1000)
  .option('--dup <k>', 'times each event is posted, in parallel', int('--dup', 1), 3)
  .option('--concurrency <c>', 'requests in flight', int('--concurrency', 1), 64)
  .option('--sink-port <port>', 'port of the sink (the fleet\'s webhook provider must post there)', int('--sink-port', 0), 9100)
  .option('--drain-seconds <s>', 'how long to wait for the last notifications', int('--drain-seconds', 1), 120)
  .option('--embedded', 'start a throwaway Redis and fleet for the run (used by npm run bench)')
  .option('--appendfsync <mode>', 'with --embedded: always | everysec', 'everysec')
  .option('--json', 'print the report as JSON')
  .option('--no-progress', 'no progress bar')
  .action(async (opts) => {
    const report = await runLoadtest({
      url: opts.url,
      events: opts.events,
      dup: opts.dup,
      concurrency: opts.concurrency,
      sinkPort: opts.embedded && opts.sinkPort === 9100 ? 0 : opts.sinkPort,
      drainSeconds: opts.drainSeconds,
      embedded: Boolean(opts.embedded),
      appendfsync: opts.appendfsync,
      json: Boolean(opts.json),
      progress: opts.progress !== false,
    });
    console.log(opts.json ? JSON.stringify(report, null, 2) : formatReport(report));
    if (report.lost > 0 || report.duplicates > 0) process.exitCode = 1;
  });

program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
