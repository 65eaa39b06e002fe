import type { Config } from '@singleshot/config';
import type { Logger } from '@singleshot/observability';
import { startTracing, type StartedTracing } from '@singleshot/tracing';

/**
 * Starts tracing for one app process (`service.name` = `singleshot-<app>`)
 * from the standard `OTEL_*` variables and the config's `tracing` section.
 * Each app's main.ts calls it before creating its runtime, so the first job
 * it takes is already traced.
 */
export function startAppTracing(config: Config, app: string): Promise<StartedTracing> {
  return startTracing({ service: `singleshot-${app}`, config: config.tracing });
}

/**
 * Logs what startTracing decided: `tracing_enabled`, or `tracing_disabled`
 * with the reason when something asked for tracing that this build cannot
 * export (another exporter or protocol). Nothing when simply off.
 */
export function logTracing(logger: Pick<Logger, 'info' | 'warn'>, tracing: StartedTracing): void {
  const { settings } = tracing;
  if (settings.enabled) logger.info({ event: 'tracing_enabled', url: settings.url ?? 'from OTEL_EXPORTER_OTLP_*', sampleRatio: settings.sampleRatio }, 'tracing on (OTLP/HTTP)');
  else if (settings.why !== 'off') logger.warn({ event: 'tracing_disabled', reason: settings.why, detail: settings.detail }, 'tracing requested but not started');
}
