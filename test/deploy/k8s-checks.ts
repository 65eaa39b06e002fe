import { APP_PORTS, APP_PORT_ENV, hasFlag } from './compose-checks';
import { arr, isObj, obj, str, type Obj } from './deploy-files';

/** The API version this folder uses for each kind (the current stable one). */
export const API_VERSIONS: Readonly<Record<string, string>> = {
  Namespace: 'v1',
  ConfigMap: 'v1',
  Secret: 'v1',
  Service: 'v1',
  Deployment: 'apps/v1',
  StatefulSet: 'apps/v1',
  HorizontalPodAutoscaler: 'autoscaling/v2',
  PodDisruptionBudget: 'policy/v1',
};

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const name = (o: Obj) => str(obj(o.metadata).name) ?? '';
const id = (o: Obj) => `${str(o.kind) ?? '?'}/${name(o)}`;
const ofKind = (objects: readonly Obj[], kind: string) => objects.filter((o) => o.kind === kind);
const podSpec = (workload: Obj) => obj(obj(obj(workload.spec).template).spec);
const templateLabels = (workload: Obj) => obj(obj(obj(obj(workload.spec).template).metadata).labels);
const containers = (workload: Obj) => arr(podSpec(workload).containers).map(obj);

function selects(selector: Obj, labels: Obj): boolean {
  const entries = Object.entries(selector);
  return entries.length > 0 && entries.every(([key, value]) => labels[key] === value);
}

/** Port number a probe or Service refers to (by name or number) among a workload's container ports. */
function resolvePort(workload: Obj, port: unknown): number | undefined {
  for (const container of containers(workload)) {
    for (const p of arr(container.ports).map(obj)) {
      if (p.name === port || p.containerPort === port) return Number(p.containerPort);
    }
  }
  return undefined;
}

/** The Deployment running `dist/apps/<app>/main.js`. */
export function appDeployment(objects: readonly Obj[], app: string): Obj | undefined {
  return ofKind(objects, 'Deployment').find((d) =>
    containers(d).some((c) => [...arr(c.command), ...arr(c.args)].map(String).includes(`dist/apps/${app}/main.js`)),
  );
}

/**
 * Problems a cluster (or a reviewer) would find in the manifests: missing or
 * dangling references, selectors that select nothing, probes on ports that do
 * not exist, root containers, unbounded resources. `leaseMs` is the delivery
 * lease from the ConfigMap's config.
 */
export function checkK8s(objects: readonly Obj[], leaseMs: number): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const o of objects) {
    const kind = str(o.kind) ?? '';
    if (!kind) problems.push(`an object has no kind: ${JSON.stringify(o).slice(0, 80)}`);
    else if (!(kind in API_VERSIONS)) problems.push(`${id(o)}: unexpected kind`);
    else if (o.apiVersion !== API_VERSIONS[kind]) problems.push(`${id(o)}: apiVersion ${String(o.apiVersion)}, expected ${API_VERSIONS[kind]}`);
    if (!DNS_LABEL.test(name(o)) || name(o).length > 63) problems.push(`${id(o)}: metadata.name must be a DNS label`);
    if (seen.has(id(o))) problems.push(`${id(o)}: defined twice`);
    seen.add(id(o));
  }
  const workloads = [...ofKind(objects, 'Deployment'), ...ofKind(objects, 'StatefulSet')];
  for (const workload of workloads) problems.push(...checkWorkload(workload, objects));
  for (const [app, port] of Object.entries(APP_PORTS)) problems.push(...checkApp(app, port, objects, leaseMs));
  problems.push(...checkServices(objects, workloads), ...checkAutoscalers(objects), ...checkRedis(objects));
  for (const pdb of ofKind(objects, 'PodDisruptionBudget')) {
    const selector = obj(obj(obj(pdb.spec).selector).matchLabels);
    if (!workloads.some((w) => selects(selector, templateLabels(w)))) problems.push(`${id(pdb)}: selects no workload`);
  }
  problems.push(...checkDisruptionBudgets(objects));
  return problems;
}

/**
 * An app run on several replicas is meant to survive losing one, so a node
 * drain must not take them all: it needs a PodDisruptionBudget. (A single
 * replica gets none: a budget would make it undrainable.)
 */
function checkDisruptionBudgets(objects: readonly Obj[]): string[] {
  const problems: string[] = [];
  for (const app of Object.keys(APP_PORTS)) {
    const deployment = appDeployment(objects, app);
    if (!deployment) continue;
    const hpa = ofKind(objects, 'HorizontalPodAutoscaler').find((h) => obj(obj(h.spec).scaleTargetRef).name === name(deployment));
    const replicas = Number(hpa ? obj(hpa.spec).minReplicas ?? 1 : obj(deployment.spec).replicas ?? 1);
    const budgeted = ofKind(objects, 'PodDisruptionBudget').some((p) => selects(obj(obj(obj(p.spec).selector).matchLabels), templateLabels(deployment)));
    if (replicas >= 2 && !budgeted) problems.push(`${id(deployment)}: runs ${replicas} replicas but no PodDisruptionBudget selects it`);
  }
  return problems;
}

function checkWorkload(workload: Obj, objects: readonly Obj[]): string[] {
  const problems: string[] = [];
  const where = id(workload);
  const spec = podSpec(workload);
  const selector = obj(obj(obj(workload.spec).selector).matchLabels);
  if (!selects(selector, templateLabels(workload))) problems.push(`${where}: selector.matchLabels must be non-empty and match the template labels`);
  if (typeof spec.terminationGracePeriodSeconds !== 'number') problems.push(`${where}: terminationGracePeriodSeconds is not set`);
  const podSecurity = obj(spec.securityContext);
  const list = containers(workload);
  if (list.length === 0) problems.push(`${where}: no containers`);
  const volumeNames = new Set([
    ...arr(spec.volumes).map((v) => str(obj(v).name)),
    ...arr(obj(workload.spec).volumeClaimTemplates).map((t) => name(obj(t))),
  ]);
  for (const volume of arr(spec.volumes).map(obj)) {
    const configMap = str(obj(volume.configMap).name);
    const secret = str(obj(volume.secret).secretName);
    if (configMap && !objects.some((o) => o.kind === 'ConfigMap' && name(o) === configMap)) problems.push(`${where}: ConfigMap ${configMap} does not exist`);
    if (secret && !objects.some((o) => o.kind === 'Secret' && name(o) === secret)) problems.push(`${where}: Secret ${secret} does not exist`);
  }
  for (const container of list) {
    const at = `${where} container ${str(container.name) ?? '?'}`;
    if (!str(container.name)) problems.push(`${where}: a container has no name`);
    if (!str(container.image)) problems.push(`${at}: no image`);
    const resources = obj(container.resources);
    for (const [section, key] of [['requests', 'cpu'], ['requests', 'memory'], ['limits', 'memory']] as const) {
      if (obj(resources[section])[key] === undefined) problems.push(`${at}: resources.${section}.${key} is not set`);
    }
    const security = { ...podSecurity, ...obj(container.securityContext) };
    if (security.runAsNonRoot !== true) problems.push(`${at}: runAsNonRoot must be true`);
    if (security.runAsUser === 0) problems.push(`${at}: runs as uid 0`);
    if (obj(container.securityContext).allowPrivilegeEscalation !== false) problems.push(`${at}: allowPrivilegeEscalation must be false`);
    for (const probe of ['readinessProbe', 'livenessProbe'] as const) {
      const spec = obj(container[probe]);
      if (Object.keys(spec).length === 0) problems.push(`${at}: no ${probe}`);
      for (const handler of [obj(spec.httpGet), obj(spec.tcpSocket)]) {
        if (handler.port !== undefined && resolvePort(workload, handler.port) === undefined) {
          problems.push(`${at}: ${probe} port ${String(handler.port)} is not a container port`);
        }
      }
    }
    for (const mount of arr(container.volumeMounts).map(obj)) {
      if (!volumeNames.has(str(mount.name))) problems.push(`${at}: volumeMount ${String(mount.name)} has no volume`);
    }
    for (const variable of arr(container.env).map(obj)) {
      const ref = obj(obj(variable.valueFrom).secretKeyRef);
      if (Object.keys(ref).length === 0) continue;
      const secret = objects.find((o) => o.kind === 'Secret' && name(o) === ref.name);
      const keys = secret ? [...Object.keys(obj(secret.data)), ...Object.keys(obj(secret.stringData))] : [];
      if (!keys.includes(str(ref.key) ?? '')) problems.push(`${at}: env ${String(variable.name)} refers to missing secret key ${String(ref.name)}/${String(ref.key)}`);
    }
  }
  return problems;
}

function checkApp(app: string, port: number, objects: readonly Obj[], leaseMs: number): string[] {
  const deployment = appDeployment(objects, app);
  if (!deployment) return [`no Deployment runs dist/apps/${app}/main.js`];
  const where = id(deployment);
  const problems: string[] = [];
  const container = containers(deployment)[0] ?? {};
  const env = Object.fromEntries(arr(container.env).map(obj).map((e) => [str(e.name), e.value]));
  if (env[APP_PORT_ENV[app] ?? ''] !== String(port)) problems.push(`${where}: ${APP_PORT_ENV[app]} must be "${port}"`);
  const probes = [['readinessProbe', '/readyz'], ['livenessProbe', '/healthz']] as const;
  for (const [probe, path] of probes) {
    const httpGet = obj(obj(container[probe]).httpGet);
    if (httpGet.path !== path) problems.push(`${where}: ${probe} must GET ${path}`);
    if (resolvePort(deployment, httpGet.port) !== port) problems.push(`${where}: ${probe} must target port ${port}`);
  }
  const grace = Number(podSpec(deployment).terminationGracePeriodSeconds);
  // In-flight jobs need their lease to finish or be released before SIGKILL.
  const needed = app === 'delivery' ? leaseMs / 1000 + 10 : 30;
  if (!(grace >= needed)) problems.push(`${where}: terminationGracePeriodSeconds ${grace} < ${needed}`);
  if ((app === 'ingest' || app === 'dashboard') && !obj(obj(container.lifecycle).preStop).exec) {
    problems.push(`${where}: an HTTP app needs a preStop pause so endpoints drop it before it stops listening`);
  }
  const configPath = str(env.SINGLESHOT_CONFIG) ?? '';
  const mount = arr(container.volumeMounts).map(obj).find((m) => configPath.startsWith(`${str(m.mountPath)}/`));
  const volume = arr(podSpec(deployment).volumes).map(obj).find((v) => mount && v.name === mount.name);
  const configMap = objects.find((o) => o.kind === 'ConfigMap' && name(o) === str(obj(volume?.configMap).name));
  const key = configPath.slice((str(mount?.mountPath) ?? '').length + 1);
  if (!configMap || !(key in obj(configMap.data))) problems.push(`${where}: SINGLESHOT_CONFIG (${configPath}) is not a key of a mounted ConfigMap`);
  return problems;
}

function checkServices(objects: readonly Obj[], workloads: readonly Obj[]): string[] {
  const problems: string[] = [];
  for (const service of ofKind(objects, 'Service')) {
    const selector = obj(obj(service.spec).selector);
    const targets = workloads.filter((w) => selects(selector, templateLabels(w)));
    if (targets.length === 0) {
      problems.push(`${id(service)}: selects no workload`);
      continue;
    }
    for (const port of arr(obj(service.spec).ports).map(obj)) {
      const target = port.targetPort ?? port.port;
      if (!targets.every((w) => resolvePort(w, target) !== undefined)) problems.push(`${id(service)}: targetPort ${String(target)} is not a container port`);
    }
  }
  for (const app of ['ingest', 'dashboard']) {
    const deployment = appDeployment(objects, app);
    if (deployment && !ofKind(objects, 'Service').some((s) => selects(obj(obj(s.spec).selector), templateLabels(deployment)))) {
      problems.push(`no Service exposes ${app}`);
    }
  }
  return problems;
}

function checkAutoscalers(objects: readonly Obj[]): string[] {
  const problems: string[] = [];
  const hpas = ofKind(objects, 'HorizontalPodAutoscaler');
  for (const hpa of hpas) {
    const spec = obj(hpa.spec);
    const ref = obj(spec.scaleTargetRef);
    const target = objects.find((o) => o.kind === ref.kind && name(o) === ref.name);
    if (ref.kind !== 'Deployment' || ref.apiVersion !== 'apps/v1' || !target) {
      problems.push(`${id(hpa)}: scaleTargetRef must name an existing apps/v1 Deployment`);
      continue;
    }
    const min = Number(spec.minReplicas ?? 1);
    if (!(min >= 1 && Number(spec.maxReplicas) >= min)) problems.push(`${id(hpa)}: needs 1 <= minReplicas <= maxReplicas`);
    const metrics = arr(spec.metrics).map(obj);
    if (metrics.length === 0) problems.push(`${id(hpa)}: no metrics`);
    for (const metric of metrics) {
      const resource = str(obj(metric.resource).name);
      if (resource && !containers(target).every((c) => obj(obj(c.resources).requests)[resource] !== undefined)) {
        problems.push(`${id(hpa)}: scales on ${resource} but ${id(target)} does not request it`);
      }
    }
    if (obj(target.spec).replicas !== undefined) problems.push(`${id(target)}: sets replicas, which would reset ${id(hpa)} on every apply`);
  }
  for (const app of ['delivery', 'ingest']) {
    const deployment = appDeployment(objects, app);
    if (deployment && !hpas.some((h) => obj(obj(h.spec).scaleTargetRef).name === name(deployment))) problems.push(`no HorizontalPodAutoscaler for ${app}`);
  }
  return problems;
}

function checkRedis(objects: readonly Obj[]): string[] {
  const redis = ofKind(objects, 'StatefulSet').find((s) => containers(s).some((c) => /(^|\/)redis[:@]/.test(str(c.image) ?? '')));
  if (!redis) return ['no Redis StatefulSet'];
  const problems: string[] = [];
  const where = id(redis);
  const serviceName = str(obj(redis.spec).serviceName);
  const service = objects.find((o) => o.kind === 'Service' && name(o) === serviceName);
  if (!service || obj(service.spec).clusterIP !== 'None') problems.push(`${where}: serviceName must name a headless Service`);
  const templates = arr(obj(redis.spec).volumeClaimTemplates).map(obj);
  if (templates.length === 0) problems.push(`${where}: no volumeClaimTemplates`);
  for (const template of templates) {
    if (!obj(obj(obj(template.spec).resources).requests).storage) problems.push(`${where}: claim ${name(template)} requests no storage`);
  }
  const container = containers(redis)[0] ?? {};
  const args = [...arr(container.command), ...arr(container.args)].map(String);
  if (!hasFlag(args, '--appendonly', /^yes$/)) problems.push(`${where}: args must set --appendonly yes`);
  if (!hasFlag(args, '--appendfsync', /^(everysec|always)$/)) problems.push(`${where}: args must set --appendfsync everysec or always`);
  if (!hasFlag(args, '--maxmemory-policy', /^noeviction$/)) problems.push(`${where}: args must set --maxmemory-policy noeviction`);
  const dir = args[args.indexOf('--dir') + 1] ?? '/data';
  const mount = arr(container.volumeMounts).map(obj).find((m) => m.mountPath === dir);
  if (!mount || !templates.some((t) => name(t) === mount.name)) problems.push(`${where}: the data dir ${dir} must be a volumeClaimTemplate mount`);
  return problems;
}

/** Keys of a Secret (data and stringData). */
export function secretKeys(secret: Obj | undefined): string[] {
  if (!isObj(secret)) return [];
  return [...Object.keys(obj(secret.data)), ...Object.keys(obj(secret.stringData))];
}
