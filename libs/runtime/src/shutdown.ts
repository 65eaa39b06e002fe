import type { Logger } from '@singleshot/observability';

/**
 * Graceful shutdown: the first SIGTERM/SIGINT stops taking work and lets what
 * is in flight finish or be released, then exits 0; a second signal exits at once.
 * Its log lines carry an `event` (`shutdown_started`, `shutdown_complete`,
 * `shutdown_forced`) that tests match.
 *
 * Returns a graceful stop that is not a signal: a supervisor asking its child
 * to stop uses it, so that the child's own SIGTERM from a service manager that
 * signals every process of the unit (systemd's default `KillMode=control-group`)
 * and the supervisor's request do not add up to "a second signal, exit now".
 */
export function onShutdown(logger: Logger, stop: () => Promise<void>): (reason: string) => void {
  let stopping = false;
  const begin = (reason: string) => {
    stopping = true;
    logger.info({ event: 'shutdown_started', signal: reason }, 'shutting down: finishing or releasing in-flight work');
    stop()
      .then(() => {
        logger.info({ event: 'shutdown_complete' }, 'shutdown complete');
        logger.flush?.();
        process.exit(0);
      })
      .catch((err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  // Only a second signal forces the exit: a stop requested otherwise (the
  // supervisor's, which may arrive just before the unit's own SIGTERM) does not count.
  let signalled = false;
  const handler = (signal: NodeJS.Signals) => {
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
