import { tracingSettings, type TracingSection, type TracingSettings } from './tracing-settings';
import { installTracing, tracingImpl } from './tracing-state';

/** The process's tracing, as startTracing left it. */
export interface StartedTracing {
  /** What was decided (and why, when off): apps log it at start. */
  settings: TracingSettings;
  /** Exports what is still buffered and stops; a no-op when tracing is off. */
  shutdown(): Promise<void>;
}

/**
 * Turns tracing on for this process when the environment or the config asks
 * for it (tracing-settings.ts); called once by each app's main.ts before its
 * runtime. When off, nothing is loaded: the helpers of spans.ts then return
 * after one check. `service` names the process in traces (`service.name`;
 * `OTEL_SERVICE_NAME` overrides it).
 */
export async function startTracing(options: {
  service: string;
  version?: string;
  config?: TracingSection | undefined;
  env?: NodeJS.ProcessEnv;
}): Promise<StartedTracing> {
  const settings = tracingSettings(options.env ?? process.env, options.config);
  if (!settings.enabled) return { settings, shutdown: async () => undefined };
  if (!tracingImpl()) {
    // The SDK is loaded here, and only here.
    const { createOtelTracing } = await import('./otel-tracing');
    installTracing(createOtelTracing({ serviceName: options.service, serviceVersion: options.version ?? '', url: settings.url, sampleRatio: settings.sampleRatio }));
  }
  return {
    settings,
    shutdown: async () => {
      const impl = tracingImpl();
      installTracing(undefined);
      await impl?.shutdown();
    },
  };
}
