import type { Logger } from '@singleshot/observability';

/**
 * Graceful shutdown: the first SIGTERM/SIGINT stops taking work and lets what
 * is in flight finish or be released, then exits 0; a second signal exits at once.
 * Its log lines carry an `event` (`shutdown_started`, `shutdown_complete`) that tests match.
 */
export function onShutdown(logger: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(130);
    }
    stopping = true;
    logger.info({ event: 'shutdown_started', signal }, 'shutting down: finishing or releasing in-flight work');
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
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}
