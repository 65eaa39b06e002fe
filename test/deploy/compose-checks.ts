import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { arr, DEPLOY, obj, ROOT, str, type Obj } from './deploy-files';

/** The apps in deploy/docker-compose.yml and the port each serves /healthz, /readyz and /metrics on. */
export const APP_PORTS: Readonly<Record<string, number>> = { ingest: 8080, decision: 9464, render: 9466, delivery: 9465, relay: 9467, dashboard: 3000 };

/** Port variable each app reads (docs/contract.md "Environment"). */
export const APP_PORT_ENV: Readonly<Record<string, string>> = {
  ingest: 'PORT',
  decision: 'METRICS_PORT',
  render: 'METRICS_PORT',
  delivery: 'METRICS_PORT',
  relay: 'METRICS_PORT',
  dashboard: 'DASHBOARD_PORT',
};

/** Compose durations (`45s`, `1m30s`) in seconds. */
export function durationSeconds(value: unknown): number {
  const text = str(value) ?? '';
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(h|m|s|ms)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) return Number.NaN;
  const unit: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 0.001 };
  return parts.reduce((sum, [, n = '0', u = 's']) => sum + Number(n) * (unit[u] ?? Number.NaN), 0);
}

/** A command as one list of words, whether compose gave a string or a list. */
export function words(command: unknown): string[] {
  if (Array.isArray(command)) return command.map(String);
  return (str(command) ?? '').split(/\s+/).filter(Boolean);
}

/** Whether `--flag value` (or `--flag=value`) appears in a command line. */
export function hasFlag(command: readonly string[], flag: string, value: RegExp): boolean {
  return command.some((word, i) => (word === flag && value.test(command[i + 1] ?? '')) || (word.startsWith(`${flag}=`) && value.test(word.slice(flag.length + 1))));
}

function env(service: Obj): Record<string, string> {
  const raw = obj(service).environment;
  if (Array.isArray(raw)) {
    return Object.fromEntries(raw.map(String).map((item) => [item.split('=')[0] ?? '', item.split('=').slice(1).join('=')]));
  }
  return Object.fromEntries(Object.entries(obj(raw)).map(([k, v]) => [k, String(v)]));
}

/** Apps that hold no lease: SIGTERM need only outlast their own bounded stop (shutdownTimeoutMs). */
const LEASELESS_APPS: ReadonlySet<string> = new Set(['relay']);

/**
 * Problems with a compose file as `docker compose config` would load it
 * (merge keys already resolved). `shutdownTimeoutMs` is the mounted config's.
 */
export function checkCompose(compose: unknown, shutdownTimeoutMs: number, composeDir = DEPLOY): string[] {
  const problems: string[] = [];
  const services = obj(obj(compose).services);
  const secrets = obj(obj(compose).secrets);
  const volumes = obj(obj(compose).volumes);
  for (const name of ['redis', ...Object.keys(APP_PORTS), 'prometheus', 'grafana']) {
    if (!(name in services)) problems.push(`service ${name} is missing`);
  }
  for (const [name, raw] of Object.entries(services)) {
    const service = obj(raw);
    if (!str(service.image) && !service.build) problems.push(`${name}: needs image or build`);
    for (const volume of arr(service.volumes).map(String)) {
      const [source = ''] = volume.split(':');
      if (source.startsWith('.') || source.startsWith('/')) {
        if (!existsSync(join(composeDir, source))) problems.push(`${name}: bind mount source ${source} does not exist`);
      } else if (!(source in volumes)) problems.push(`${name}: named volume ${source} is not declared`);
    }
    for (const secret of arr(service.secrets)) {
      const secretName = str(secret) ?? str(obj(secret).source) ?? '';
      if (!(secretName in secrets)) problems.push(`${name}: secret ${secretName} is not declared`);
    }
  }
  for (const [name, secret] of Object.entries(secrets)) {
    const file = str(obj(secret).file);
    if (file && !existsSync(join(composeDir, file))) problems.push(`secret ${name}: file ${file} does not exist`);
  }

  const redis = obj(services.redis);
  const command = words(redis.command);
  if (!hasFlag(command, '--appendonly', /^yes$/)) problems.push('redis: command must set --appendonly yes');
  if (!hasFlag(command, '--appendfsync', /^(everysec|always)$/)) problems.push('redis: command must set --appendfsync everysec or always');
  if (!hasFlag(command, '--maxmemory-policy', /^noeviction$/)) problems.push('redis: command must set --maxmemory-policy noeviction');
  if (!arr(redis.volumes).map(String).some((v) => /:\/data(:|$)/.test(v))) problems.push('redis: /data must be a volume (the AOF lives there)');
  if (!obj(redis.healthcheck).test) problems.push('redis: needs a healthcheck for the apps to wait on');

  for (const [app, port] of Object.entries(APP_PORTS)) problems.push(...checkAppService(app, port, obj(services[app]), shutdownTimeoutMs));
  return problems;
}

function checkAppService(app: string, port: number, service: Obj, shutdownTimeoutMs: number): string[] {
  const problems: string[] = [];
  const build = obj(service.build);
  const context = str(build.context) ?? '';
  const dockerfile = str(build.dockerfile) ?? 'Dockerfile';
  if (!context || resolve(DEPLOY, context) !== ROOT) problems.push(`${app}: build context must be the repository root`);
  else if (!existsSync(join(ROOT, dockerfile))) problems.push(`${app}: dockerfile ${dockerfile} does not exist`);
  const command = words(service.command);
  if (command[0] !== `dist/apps/${app}/main.js`) problems.push(`${app}: command must start dist/apps/${app}/main.js, got ${command.join(' ')}`);
  const environment = env(service);
  for (const key of ['REDIS_URL', 'SINGLESHOT_CONFIG']) if (!environment[key]) problems.push(`${app}: ${key} is not set`);
  const portVariable = APP_PORT_ENV[app] ?? '';
  if (environment[portVariable] !== String(port)) problems.push(`${app}: ${portVariable} must be ${port}`);
  const config = environment.SINGLESHOT_CONFIG;
  if (config && !arr(service.volumes).map(String).some((v) => v.split(':')[1] === config)) {
    problems.push(`${app}: nothing is mounted at SINGLESHOT_CONFIG (${config})`);
  }
  const health = words(obj(service.healthcheck).test);
  if (!health.includes(String(port))) problems.push(`${app}: healthcheck must probe port ${port}, got ${health.join(' ')}`);
  if (str(obj(obj(service.depends_on).redis).condition) !== 'service_healthy') problems.push(`${app}: must wait for redis to be healthy`);
  // Every app must be able to end its own bounded stop before SIGKILL; the
  // others must also outlast the 30 s delivery lease.
  const grace = durationSeconds(service.stop_grace_period);
  const needed = Math.max(shutdownTimeoutMs / 1000 + 5, LEASELESS_APPS.has(app) ? 0 : 35);
  if (!(grace >= needed)) problems.push(`${app}: stop_grace_period must be at least ${needed}s, got ${String(service.stop_grace_period)}`);
  return problems;
}

/** Host:port targets of every Prometheus scrape job, by job name. */
export function scrapeTargets(prometheus: unknown): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const job of arr(obj(prometheus).scrape_configs)) {
    const targets: string[] = [];
    for (const sd of arr(obj(job).dns_sd_configs)) {
      for (const name of arr(obj(sd).names)) targets.push(`${String(name)}:${String(obj(sd).port)}`);
    }
    for (const sc of arr(obj(job).static_configs)) targets.push(...arr(obj(sc).targets).map(String));
    out.set(str(obj(job).job_name) ?? '', targets);
  }
  return out;
}
