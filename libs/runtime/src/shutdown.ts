import { endLogs, type Logger } from '@singleshot/observability';
import { inFlightJobs } from './in-flight-jobs';

/** What `onShutdown` needs besides the stop itself. */
export interface ShutdownOptions {
  /**
   * The deadline of the graceful stop (`shutdownTimeoutMs`). Past it the
   * process logs `shutdown_timeout` with the jobs it abandons and exits 1.
   */
  timeoutMs: number;
}

/** Exit code of a stop that ran past its deadline. */
export const SHUTDOWN_TIMEOUT_EXIT_CODE = 1;

/** How long the last lines may take to reach stdout before the process exits without them. */
const LAST_WORDS_MS = 1000;

/**
 * Exits once the log lines written so far have reached stdout (`endLogs`): on
 * a loaded machine the last one, `shutdown_timeout` with what the stop
 * abandoned, could otherwise be lost. A stdout nobody reads does not hold the
 * exit past `LAST_WORDS_MS`.
 */
function exitWhenWritten(logger: Logger, code: number): void {
  const exit = () => process.exit(code);
  setTimeout(exit, LAST_WORDS_MS);
  endLogs(logger, exit);
}

/**
 * Graceful shutdown: the first SIGTERM/SIGINT stops taking work and lets what
 * is in flight finish or be released, then exits 0; a second signal exits at once.
 * Its log lines carry an `event` (`shutdown_started`, `shutdown_complete`,
 * `shutdown_forced`, `shutdown_timeout`) that tests match.
 *
 * The stop is bounded by `timeoutMs`: with Redis gone, closing a worker or
 * releasing a claim can wait forever for a reconnect, and a service manager
 * (Kubernetes: 30 s after SIGTERM) would SIGKILL the process anyway, without
 * a word. Past the deadline the process says what it abandons and exits 1;
 * nothing is lost, since an abandoned claim stays fenced and its lease expires,
 * so another worker takes the operation over.
 *
 * Returns a graceful stop that is not a signal: a supervisor asking its child
 * to stop uses it, so that the child's own SIGTERM from a service manager that
 * signals every process of the unit (systemd's default `KillMode=control-group`)
 * and the supervisor's request do not add up to "a second signal, exit now".
 */
export function onShutdown(logger: Logger, stop: () => Promise<void>, options: ShutdownOptions): (reason: string) => void {
  let stopping = false;
  // Whichever ends the stop first (the deadline or the stop) writes the last line and exits: nothing
  // else may write after the log stream has ended, a second signal included.
  let leaving = false;
  const begin = (reason: string) => {
    stopping = true;
    const startedAt = Date.now();
    logger.info({ event: 'shutdown_started', signal: reason, timeoutMs: options.timeoutMs }, 'shutting down: finishing or releasing in-flight work');
    // Not unref'd: a stop stuck on a dead Redis may leave nothing else to keep the
    // loop alive, and then the process would end with exit 0 as if it had finished.
    const deadline = setTimeout(() => {
      if (leaving) return;
      leaving = true;
      const abandoned = inFlightJobs();
      logger.error(
        { event: 'shutdown_timeout', signal: reason, timeoutMs: options.timeoutMs, elapsedMs: Date.now() - startedAt, inFlightJobs: abandoned, inFlightTotal: Object.values(abandoned).reduce((a, b) => a + b, 0) },
        'shutdown did not finish in time: exiting; abandoned claims stay fenced and are taken over when their leases expire',
      );
      exitWhenWritten(logger, SHUTDOWN_TIMEOUT_EXIT_CODE);
    }, options.timeoutMs);
    stop()
      .then(() => {
        if (leaving) return;
        leaving = true;
        clearTimeout(deadline);
        logger.info({ event: 'shutdown_complete' }, 'shutdown complete');
        exitWhenWritten(logger, 0);
      })
      .catch((err: unknown) => {
        if (leaving) return;
        leaving = true;
        clearTimeout(deadline);
        logger.error({ event: 'shutdown_failed', err }, 'shutdown failed');
        exitWhenWritten(logger, 1);
      });
  };
  // Only a second signal forces the exit: a stop requested otherwise (the
  // supervisor's, which may arrive just before the unit's own SIGTERM) does not count.
  let signalled = false;
  const handler = (signal: NodeJS.Signals) => {
    if (leaving) return;
    if (signalled) {
      logger.warn({ event: 'shutdown_forced', signal }, 'second signal: exiting now');
      process.exit(130);
    }
    signalled = true;
    if (!stopping) begin(signal);
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
  return (reason: string) => {
    if (!stopping) begin(reason);
  };
}
