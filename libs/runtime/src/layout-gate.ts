import type { Logger } from '@singleshot/observability';
import { LayoutError, checkLayout, type KeyBuilder, type RedisClient } from '@singleshot/store';

/**
 * A process refuses to start against a Redis layout it does not know: this
 * throws `LayoutError` when Redis answers the check within `waitMs`. A Redis
 * that is down at start delays the check, not the start (ingest must answer
 * 503 and health checks must answer meanwhile): the check completes when
 * Redis answers, and a refusal then stops the process through its usual
 * graceful stop (SIGTERM to itself). A Redis that refuses the check (out of
 * memory, read-only) is logged, as the configuration check is.
 */
export async function checkLayoutAtStart(redis: RedisClient, keys: KeyBuilder, logger: Logger, waitMs = 3_000): Promise<void> {
  const check = checkLayout(redis, keys, {
    onMigration: (migration, shard) => logger.info({ event: 'layout_migration', to: migration.to, shard }, `migrating the Redis layout to ${migration.to}: ${migration.describe}`),
  });
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<'pending'>((resolve) => {
    timer = setTimeout(() => resolve('pending'), waitMs);
    timer.unref();
  });
  try {
    if ((await Promise.race([check.then(() => 'done' as const), waited])) === 'done') return;
  } catch (err) {
    if (err instanceof LayoutError) throw err;
    logger.warn({ event: 'layout_check_failed', err }, 'could not read the Redis layout version');
    return;
  } finally {
    clearTimeout(timer);
  }
  logger.warn({ event: 'layout_check_pending', waitMs }, 'Redis did not answer the layout check yet; starting, the check completes when Redis answers');
  check.catch((err: unknown) => {
    if (err instanceof LayoutError) {
      logger.fatal({ event: 'layout_refused', code: err.code, held: err.held }, err.message);
      process.kill(process.pid, 'SIGTERM');
    } else logger.warn({ event: 'layout_check_failed', err }, 'could not read the Redis layout version');
  });
}
