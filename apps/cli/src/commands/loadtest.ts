import { InvalidArgumentError, type Command } from 'commander';
import type { FleetLayout } from '../loadtest/fleet';

function int(name: string, min: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be an integer >= ${min}`);
    return n;
  };
}

export function registerLoadtest(program: Command): void {
  program
    .command('loadtest')
    .description('parallel duplicate deliveries against a running fleet, counted at a sink it starts itself')
    .option('--url <url>', 'ingest base URL', 'http://127.0.0.1:8080')
    .option('--events <n>', 'distinct events', int('--events', 1), 1000)
    .option('--dup <k>', 'times each event is posted, in parallel', int('--dup', 1), 3)
    .option('--concurrency <c>', 'requests in flight', int('--concurrency', 1), 64)
    .option('--sink-port <port>', "port of the sink (the fleet's webhook provider must post there)", int('--sink-port', 0), 9100)
    .option('--drain-seconds <s>', 'how long to wait for the last notifications', int('--drain-seconds', 1), 120)
    .option('--embedded', 'start a throwaway Redis and fleet for the run')
    .option('--layout <layout>', 'with --embedded: single (one process) | split (a process per app)', 'single')
    .option('--appendfsync <mode>', 'with --embedded: always | everysec', 'everysec')
    .option('--rate <r>', 'open loop: start r events per second on a schedule, not waiting for answers', int('--rate', 1))
    .option('--duration <s>', 'with --rate: seconds of arrivals (events = rate × duration)', int('--duration', 1), 10)
    .option('--producer-limit <n>', "with --embedded: ingest's per-producer limit, requests/s (default: above the offered load; lower it to see 429s answered and retried)", int('--producer-limit', 1))
    .option('--json', 'print the report as JSON')
    .option('--no-progress', 'no progress bar')
    .action(async (opts) => {
      // The load generator (undici, the progress bar, the fleet) loads only when used.
      const { formatReport, runLoadtest } = await import('../loadtest/run');
      const report = await runLoadtest({
        url: opts.url,
        events: opts.rate ? opts.rate * opts.duration : opts.events,
        ...(opts.rate ? { rate: opts.rate } : {}),
        dup: opts.dup,
        concurrency: opts.concurrency,
        sinkPort: opts.embedded && opts.sinkPort === 9100 ? 0 : opts.sinkPort,
        drainSeconds: opts.drainSeconds,
        embedded: Boolean(opts.embedded),
        layout: opts.layout as FleetLayout,
        appendfsync: opts.appendfsync,
        json: Boolean(opts.json),
        progress: opts.progress !== false,
        ...(opts.producerLimit ? { producerLimit: opts.producerLimit } : {}),
      });
      console.log(opts.json ? JSON.stringify(report, null, 2) : formatReport(report));
      if (report.lost > 0 || report.duplicates > 0) process.exitCode = 1;
    });
}
