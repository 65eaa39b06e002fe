import { ensureSection, type RawObject } from './raw';

/** Environment variables that override config keys (docs/contract.md "Environment"). */
export const ENV_OVERRIDES: ReadonlyArray<{ variable: string; paths: ReadonlyArray<readonly [string, string]>; numeric: boolean }> = [
  { variable: 'REDIS_URL', paths: [['redis', 'url']], numeric: false },
  { variable: 'PORT', paths: [['ingest', 'port']], numeric: true },
  { variable: 'DASHBOARD_PORT', paths: [['dashboard', 'port']], numeric: true },
  { variable: 'LOG_LEVEL', paths: [['log', 'level']], numeric: false },
  {
    variable: 'METRICS_PORT',
    paths: [
      ['decision', 'metricsPort'],
      ['delivery', 'metricsPort'],
      ['documents', 'metricsPort'],
    ],
    numeric: true,
  },
  {
    variable: 'METRICS_HOST',
    paths: [
      ['decision', 'metricsHost'],
      ['delivery', 'metricsHost'],
      ['documents', 'metricsHost'],
    ],
    numeric: false,
  },
];

/**
 * Writes the environment's overrides into raw (unvalidated) input, in place, so
 * a bad value is reported by the schema at the key it overrides. Returns the
 * dotted paths that came from the environment → variable name, so error
 * messages can say where a value came from. Empty variables count as unset.
 */
export function applyEnvOverrides(raw: RawObject, env: NodeJS.ProcessEnv): Map<string, string> {
  const origins = new Map<string, string>();
  for (const { variable, paths, numeric } of ENV_OVERRIDES) {
    const value = env[variable]?.trim();
    if (!value) continue;
    // Leave non-numeric text as a string: the schema then reports it at the port's path.
    const typed: unknown = numeric && /^\d+$/.test(value) ? Number(value) : value;
    for (const [section, key] of paths) {
      const target = ensureSection(raw, section);
      if (!target) continue;
      target[key] = typed;
      origins.set(`${section}.${key}`, variable);
    }
  }
  // A list, nested one level deeper than the table above handles.
  const nodes = env.REDIS_CLUSTER_NODES?.trim();
  const redis = nodes ? ensureSection(raw, 'redis') : undefined;
  const cluster = redis ? ensureSection(redis, 'cluster') : undefined;
  if (nodes && cluster) {
    cluster.nodes = nodes.split(',').map((n) => n.trim()).filter(Boolean);
    origins.set('redis.cluster.nodes', 'REDIS_CLUSTER_NODES');
  }
  return origins;
}
