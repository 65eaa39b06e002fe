/** The config file's `tracing` section, as this lib reads it (libs/config validates it). */
export interface TracingSection {
  enabled: boolean;
  endpoint?: string | undefined;
  sampleRatio: number;
}

/** What startTracing does, worked out from the environment and the config. */
export type TracingSettings =
  | { enabled: false; why: 'off' | 'sdk_disabled' | 'exporter_none' | 'unsupported_exporter' | 'unsupported_protocol'; detail?: string }
  | {
      enabled: true;
      /** The traces URL to give the exporter; undefined: the exporter reads `OTEL_EXPORTER_OTLP_*` itself. */
      url: string | undefined;
      sampleRatio: number;
    };

const SUPPORTED_PROTOCOL = 'http/json';

/**
 * Reads the standard OpenTelemetry variables first (they override the
 * config, as every singleshot variable does): `OTEL_SDK_DISABLED=true` and
 * `OTEL_TRACES_EXPORTER=none` turn tracing off; `OTEL_TRACES_EXPORTER=otlp`
 * or an `OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT` turns it on; otherwise
 * `tracing.enabled`. Only OTLP over HTTP with JSON bodies is shipped: another
 * exporter or protocol turns tracing off with the reason (logged at start),
 * rather than exporting something the operator did not ask for.
 */
export function tracingSettings(env: NodeJS.ProcessEnv, section: TracingSection | undefined): TracingSettings {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return { enabled: false, why: 'sdk_disabled' };
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((e) => e.trim().toLowerCase()).filter(Boolean);
  if (exporters.includes('none')) return { enabled: false, why: 'exporter_none' };
  const others = exporters.filter((e) => e !== 'otlp');
  if (others.length > 0) return { enabled: false, why: 'unsupported_exporter', detail: others.join(',') };
  const envEndpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const on = exporters.includes('otlp') || Boolean(envEndpoint) || section?.enabled === true;
  if (!on) return { enabled: false, why: 'off' };
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || SUPPORTED_PROTOCOL).trim().toLowerCase();
  if (protocol !== SUPPORTED_PROTOCOL) return { enabled: false, why: 'unsupported_protocol', detail: protocol };
  const url = envEndpoint || !section?.endpoint ? undefined : `${section.endpoint.replace(/\/+$/, '')}/v1/traces`;
  return { enabled: true, url, sampleRatio: sampleRatioOf(env, section) };
}

/** `OTEL_TRACES_SAMPLER_ARG` when a ratio sampler is named (or none is), else the config's ratio. */
function sampleRatioOf(env: NodeJS.ProcessEnv, section: TracingSection | undefined): number {
  const sampler = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase();
  if (sampler === 'always_off' || sampler === 'parentbased_always_off') return 0;
  if (sampler === 'always_on' || sampler === 'parentbased_always_on') return 1;
  const arg = Number(env.OTEL_TRACES_SAMPLER_ARG);
  if (env.OTEL_TRACES_SAMPLER_ARG !== undefined && Number.isFinite(arg) && arg >= 0 && arg <= 1) return arg;
  return section?.sampleRatio ?? 1;
}
