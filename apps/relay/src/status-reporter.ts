import { hostname } from 'node:os';
import type { SourceConfig } from '@singleshot/config';
import type { Logger } from '@singleshot/observability';
import { SOURCE_STATUS_INTERVAL_MS, type SourceStatus, type SourceStatusStore } from '@singleshot/store';
import type { Source } from './source';

/** A lag question that takes longer than this is reported as unknown: the report must not wait on a stuck origin. */
const LAG_DEADLINE_MS = 2_000;

/**
 * Writes each running source's reachability and lag into singleshot's Redis
 * now and every `intervalMs`, so operators see sources where they see queues.
 * A failed write (Redis away) is skipped: the next one replaces it, and no
 * message depends on it.
 */
export function startStatusReporter(
  store: Pick<SourceStatusStore, 'report'>,
  sources: ReadonlyArray<{ source: Source; config: SourceConfig }>,
  logger: Logger,
  intervalMs = SOURCE_STATUS_INTERVAL_MS,
): { stop(): void } {
  const reporter = `${hostname()}:${process.pid}`;
  let writing = false;
  const tick = async () => {
    if (writing) return;
    writing = true;
    try {
      const statuses: SourceStatus[] = await Promise.all(
        sources.map(async ({ source, config }) => ({
          source: source.name,
          type: config.type,
          reachable: source.reachable(),
          lag: (await withDeadline(source.lag(), LAG_DEADLINE_MS)) ?? null,
          reportedAt: Date.now(),
          reporter,
        })),
      );
      await store.report(statuses);
    } catch (err) {
      logger.debug({ event: 'source_status_unwritten', err }, 'source status not written');
    } finally {
      writing = false;
    }
  };
  void tick();
  const timer = setInterval(() => void tick(), intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.catch(() => undefined),
    new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
