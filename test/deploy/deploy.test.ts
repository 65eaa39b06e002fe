import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join, posix } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '@singleshot/config';
import { APP_PORTS, checkCompose, scrapeTargets } from './compose-checks';
import { arr, DEPLOY, isObj, listFiles, loadYaml, loadYamlDocuments, obj, rel, ROOT, runTool, str, which, withLocalSecretFiles, type Obj } from './deploy-files';
import { checkDockerfile, checkNodeImage, dockerignoreRules, isIgnored } from './dockerfile-checks';
import { appDeployment, checkK8s, secretKeys } from './k8s-checks';
import { appsMissingFromDeploy, deployedApps, START_APPS_SOURCE } from './start-apps';

/**
 * deploy/: the image, Docker Compose and Kubernetes files, checked for what a
 * container engine or a cluster would need (none runs here), with the config
 * they mount validated by @singleshot/config. Alert rules and the dashboard:
 * monitoring.test.ts.
 */
const tmp = mkdtempSync(join(tmpdir(), 'singleshot-deploy-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const file = (path: string) => join(DEPLOY, path);
const read = (path: string) => readFileSync(file(path), 'utf8');

describe('every YAML file in deploy/', () => {
  it('parses without errors, every document a mapping', () => {
    const files = listFiles(DEPLOY, ['.yml', '.yaml']);
    expect(files.length).toBeGreaterThanOrEqual(15);
    for (const path of files) {
      const documents = loadYamlDocuments(path);
      expect(documents.length, rel(path)).toBeGreaterThan(0);
      for (const document of documents) expect(isObj(document), rel(path)).toBe(true);
    }
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const rules = dockerignoreRules(read('Dockerfile.dockerignore'));

  it('is multi-stage and non-root, runs node with the app as its command, and copies only what exists and is not ignored', () => {
    expect(checkDockerfile(dockerfile, rules)).toEqual([]);
  });

  it('builds and runs on the Node.js LTS that CI tests and engines admits', () => {
    const engines = str(obj(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).engines).node) ?? '';
    expect(checkNodeImage(dockerfile, engines)).toEqual([]);
    expect(checkNodeImage(dockerfile.replace(/node:22-/, 'node:20-'), engines)).toEqual([
      'base image must be node:22-…, got node:20-bookworm-slim',
      `engines "${engines}" does not admit the image's Node 20`,
    ]);
    expect(checkNodeImage(dockerfile, '>=20.18.1 <21')).toEqual(['engines ">=20.18.1 <21" does not admit the image\'s Node 22']);
  });

  it('the checks catch a root user, a shell entrypoint, dev dependencies and an ignored source', () => {
    const broken = dockerfile
      .replace('USER 1000:1000', 'USER node')
      .replace('ENTRYPOINT ["node"]', 'ENTRYPOINT node')
      .replace('--omit=dev --ignore-scripts', '--ignore-scripts');
    expect(checkDockerfile(broken, [...rules, 'tools/'])).toEqual([
      'runtime USER must be a numeric uid (runAsNonRoot can only verify numbers), got "node"',
      'ENTRYPOINT must be ["node"] (exec form)',
      'runtime node_modules must come from a stage running `npm ci --omit=dev --ignore-scripts`',
      'COPY source tools is excluded by the dockerignore file',
    ]);
  });

  it('ignore rules: the last match wins, a folder rule covers its contents, ** spans folders', () => {
    const list = ['*', '!apps/', '**/*.test.ts', '!apps/keep.test.ts'];
    expect(isIgnored('node_modules/x/index.js', list)).toBe(true);
    expect(isIgnored('apps/cli/package.json', list)).toBe(false);
    expect(isIgnored('apps/cli/src/main.test.ts', list)).toBe(true);
    expect(isIgnored('apps/keep.test.ts', list)).toBe(false);
    expect(isIgnored('libs/core/src/keys.ts', rules)).toBe(false);
    expect(isIgnored('libs/core/src/keys.test.ts', rules)).toBe(true);
    expect(isIgnored('node_modules/yaml/package.json', rules)).toBe(true);
  });
});

describe('container healthcheck (deploy/healthcheck.mjs)', () => {
  const servers: Server[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  });

  async function serve(status: number): Promise<number> {
    const server = createServer((req, res) => {
      res.statusCode = req.url === '/healthz' ? status : 404;
      res.end();
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  }

  const exitCode = (port: number) =>
    new Promise<number>((resolve) => {
      execFile(process.execPath, [file('healthcheck.mjs'), String(port)], { timeout: 20_000 }, (err) => {
        resolve(err ? Number((err as NodeJS.ErrnoException & { code?: unknown }).code ?? 1) : 0);
      });
    });

  it('exits 0 when /healthz answers 200, 1 on another status or when nothing listens', async () => {
    expect(await exitCode(await serve(200))).toBe(0);
    expect(await exitCode(await serve(503))).toBe(1);
    const closed = await serve(200);
    await new Promise((resolve) => servers.pop()?.close(resolve));
    expect(await exitCode(closed)).toBe(1);
  });
});

describe('docker-compose.yml', () => {
  const compose = loadYaml(file('docker-compose.yml'));
  const services = obj(obj(compose).services);
  const mounted = withLocalSecretFiles(loadYaml(file('singleshot.config.yaml')), join(tmp, 'compose-secrets'));
  const parsed = parseConfig(mounted.config, { REDIS_URL: 'redis://redis:6379' }, { source: 'deploy/singleshot.config.yaml' });

  it('has Redis with AOF and noeviction, every app with image, command, ports, healthcheck and grace period', () => {
    expect(checkCompose(compose, parsed.shutdownTimeoutMs)).toEqual([]);
  });

  it('the checks catch Redis without AOF or noeviction, a wrong healthcheck port and short grace periods', () => {
    const broken = structuredClone(compose) as Obj;
    const brokenServices = obj(broken.services);
    obj(brokenServices.redis).command = ['redis-server', '--appendonly', 'no'];
    obj(brokenServices.delivery).healthcheck = { test: ['CMD', 'node', '/app/healthcheck.mjs', '8080'] };
    obj(brokenServices.decision).stop_grace_period = '10s';
    obj(brokenServices.relay).stop_grace_period = '20s';
    expect(checkCompose(broken, parsed.shutdownTimeoutMs)).toEqual([
      'redis: command must set --appendonly yes',
      'redis: command must set --appendfsync everysec or always',
      'redis: command must set --maxmemory-policy noeviction',
      'decision: stop_grace_period must be at least 35s, got 10s',
      'delivery: healthcheck must probe port 9465, got CMD node /app/healthcheck.mjs 8080',
      'relay: stop_grace_period must be at least 25s, got 20s',
    ]);
  });

  it('Prometheus scrapes every app on its health port and loads rules.yml', () => {
    const prometheusService = obj(services.prometheus);
    const configFlag = arr(prometheusService.command).map(String).find((w) => w.startsWith('--config.file='));
    const configDir = posix.dirname(configFlag?.split('=')[1] ?? '');
    expect(arr(prometheusService.volumes)).toContain(`./prometheus:${configDir}:ro`);
    const prometheus = loadYaml(file('prometheus/prometheus.yml'));
    const targets = scrapeTargets(prometheus);
    for (const [app, port] of Object.entries(APP_PORTS)) expect(targets.get(app), app).toEqual([`${app}:${port}`]);
    expect(arr(obj(prometheus).rule_files)).toEqual(['rules.yml']);
    const alertmanagers = arr(obj(obj(prometheus).alerting).alertmanagers).flatMap((a) => arr(obj(a).static_configs));
    expect(alertmanagers.flatMap((c) => arr(obj(c).targets))).toEqual(['alertmanager:9093']);
    expect(services.alertmanager).toBeDefined();
  });

  it('Grafana is provisioned with the datasource the dashboard uses and loads dashboards from where compose mounts them', () => {
    const volumes = arr(obj(services.grafana).volumes).map(String);
    expect(volumes).toContain('./grafana/provisioning:/etc/grafana/provisioning:ro');
    const datasources = arr(obj(loadYaml(file('grafana/provisioning/datasources/prometheus.yml'))).datasources).map(obj);
    expect(datasources).toHaveLength(1);
    expect(datasources[0]).toMatchObject({ type: 'prometheus', url: 'http://prometheus:9090', uid: 'singleshot-prometheus' });
    const providers = arr(obj(loadYaml(file('grafana/provisioning/dashboards/singleshot.yml'))).providers).map(obj);
    const path = str(obj(providers[0]?.options).path);
    expect(volumes).toContain(`./grafana/dashboards:${path}:ro`);
    expect(readdirSync(file('grafana/dashboards'))).toContain('singleshot.json');
  });

  it('mounts a config that @singleshot/config accepts, and every secret file it names in every app', () => {
    const { secretPaths } = mounted;
    expect(parsed.routes.length).toBeGreaterThan(0);
    expect(parsed.dashboard.auth?.username).toBeTruthy();
    expect(secretPaths.length).toBeGreaterThan(0);
    for (const path of secretPaths) {
      expect(path).toMatch(/^\/run\/secrets\/[\w-]+$/);
      for (const app of Object.keys(APP_PORTS)) expect(arr(obj(services[app]).secrets), `${app} mounts ${path}`).toContain(basename(path));
    }
  });

  const composeCli = runTool('docker', ['compose', 'version']).status === 0 ? ['docker', 'compose'] : which('docker-compose') ? ['docker-compose'] : undefined;
  it.skipIf(!composeCli)('`docker compose config` accepts it (when a compose CLI is installed; the structure is checked above regardless)', () => {
    const [command = '', ...prefix] = composeCli ?? [];
    const result = runTool(command, [...prefix, '-f', file('docker-compose.yml'), 'config', '-q']);
    expect(result.output).toBe('');
    expect(result.status).toBe(0);
  });
});

describe('Kubernetes manifests (deploy/k8s)', () => {
  const kustomization = obj(loadYaml(file('k8s/kustomization.yaml')));
  const resources = arr(kustomization.resources).map(String);
  const objects = resources.flatMap((r) => loadYamlDocuments(file(`k8s/${r}`))).map(obj);
  const configMap = objects.find((o) => o.kind === 'ConfigMap');
  const rawConfig: unknown = loadYamlDocuments(writeTemp('k8s-config.yaml', str(obj(configMap?.data)['config.yaml']) ?? ''))[0];
  const leaseMs = Number(obj(obj(rawConfig).delivery).leaseMs ?? 30_000);

  it('the kustomization lists every manifest in k8s/ and names the image the containers use', () => {
    const manifests = readdirSync(file('k8s')).filter((n) => /\.ya?ml$/.test(n) && n !== 'kustomization.yaml');
    expect([...resources].sort()).toEqual(manifests.sort());
    expect(kustomization.namespace).toBe('singleshot');
    const images = arr(kustomization.images).map((i) => str(obj(i).name));
    for (const app of Object.keys(APP_PORTS)) {
      const deployment = appDeployment(objects, app);
      expect(images, app).toContain(str(obj(arr(obj(obj(obj(deployment?.spec).template).spec).containers)[0]).image));
    }
  });

  it('every object has what a cluster needs: probes, resources, non-root, selectors and references that resolve', () => {
    expect(objects.length).toBeGreaterThanOrEqual(15);
    expect(checkK8s(objects, leaseMs)).toEqual([]);
  });

  it('the checks catch a selector mismatch, a root container, a wrong probe, a dangling HPA, Redis without AOF and a missing PDB', () => {
    const broken = structuredClone(objects).filter((o) => !(o.kind === 'PodDisruptionBudget' && obj(o.metadata).name === 'singleshot-relay'));
    const deployment = (app: string) => obj(appDeployment(broken, app));
    const podOf = (o: Obj) => obj(obj(obj(o.spec).template).spec);
    obj(obj(obj(deployment('decision').spec).selector).matchLabels)['app.kubernetes.io/component'] = 'other';
    obj(podOf(deployment('dashboard')).securityContext).runAsNonRoot = false;
    obj(obj(obj(arr(podOf(deployment('ingest')).containers)[0]).readinessProbe).httpGet).path = '/healthz';
    const hpa = obj(broken.find((o) => o.kind === 'HorizontalPodAutoscaler'));
    obj(obj(hpa.spec).scaleTargetRef).name = 'missing';
    const redis = obj(broken.find((o) => o.kind === 'StatefulSet'));
    obj(arr(podOf(redis).containers)[0]).args = ['--appendonly', 'no', '--maxmemory-policy', 'allkeys-lru'];
    const problems = checkK8s(broken, leaseMs).join('\n');
    expect(problems).toContain('Deployment/singleshot-decision: selector.matchLabels must be non-empty and match the template labels');
    expect(problems).toContain('Deployment/singleshot-dashboard container dashboard: runAsNonRoot must be true');
    expect(problems).toContain('Deployment/singleshot-ingest: readinessProbe must GET /readyz');
    expect(problems).toContain(`HorizontalPodAutoscaler/${String(obj(hpa.metadata).name)}: scaleTargetRef must name an existing apps/v1 Deployment`);
    expect(problems).toContain('StatefulSet/redis: args must set --appendonly yes');
    expect(problems).toContain('StatefulSet/redis: args must set --maxmemory-policy noeviction');
    expect(problems).toContain('Deployment/singleshot-relay: runs 2 replicas but no PodDisruptionBudget selects it');
  });

  it('the ConfigMap holds a config @singleshot/config accepts, and each secret file it names is a key of the Secret mounted there', () => {
    const { config, secretPaths } = withLocalSecretFiles(rawConfig, join(tmp, 'k8s-secrets'));
    const parsed = parseConfig(config, {}, { source: 'k8s/configmap.yaml' });
    expect(new URL(parsed.redis.url).hostname).toBe('redis-0.redis');
    expect(secretPaths).toContain('/etc/singleshot/secrets/redis-password');
    for (const app of Object.keys(APP_PORTS)) {
      const pod = obj(obj(obj(appDeployment(objects, app)?.spec).template).spec);
      const container = obj(arr(pod.containers)[0]);
      for (const path of secretPaths) {
        const mount = arr(container.volumeMounts).map(obj).find((m) => str(m.mountPath) === dirname(path));
        const volume = arr(pod.volumes).map(obj).find((v) => mount && v.name === mount.name);
        const secret = objects.find((o) => o.kind === 'Secret' && obj(o.metadata).name === obj(volume?.secret).secretName);
        expect(secretKeys(secret), `${app}: ${path}`).toContain(basename(path));
      }
    }
  });

  it.skipIf(!which('kubectl'))('`kubectl kustomize` renders the same objects (when kubectl is installed)', () => {
    const result = runTool('kubectl', ['kustomize', file('k8s')]);
    expect(result.status, result.output).toBe(0);
    const rendered = loadYamlDocuments(writeTemp('rendered.yaml', result.output)).map(obj);
    expect(rendered.map((o) => `${String(o.kind)}/${String(obj(o.metadata).name)}`).sort()).toEqual(
      objects.map((o) => `${String(o.kind)}/${String(obj(o.metadata).name)}`).sort(),
    );
    for (const o of rendered.filter((r) => r.kind !== 'Namespace')) expect(obj(o.metadata).namespace).toBe('singleshot');
  });
});

describe('every app is deployed: those `singleshot start` runs and those with their own entrypoint', () => {
  const apps = deployedApps();
  const k8sObjects = (dir: string) =>
    arr(obj(loadYaml(file(`${dir}/kustomization.yaml`))).resources)
      .map(String)
      .filter((r) => !r.startsWith('..'))
      .flatMap((r) => loadYamlDocuments(file(`${dir}/${r}`)))
      .map(obj);

  it('the list comes from APP_NAMES and apps/<name>/src/main.ts (not the CLI, not a library-only folder)', () => {
    const appsDir = join(tmp, 'apps');
    for (const [app, entry] of [['cli', 'main.ts'], ['ingest', 'main.ts'], ['newworker', 'main.ts'], ['helpers', 'index.ts']] as const) {
      mkdirSync(join(appsDir, app, 'src'), { recursive: true });
      writeFileSync(join(appsDir, app, 'src', entry), '');
    }
    const startSource = "export const APP_NAMES = ['ingest', 'decision'] as const;";
    expect(deployedApps(appsDir, startSource)).toEqual(['ingest', 'decision', 'newworker']);
    expect(() => deployedApps(appsDir, 'const nothing = 1;')).toThrow(START_APPS_SOURCE);
    expect(apps).toEqual(expect.arrayContaining(['ingest', 'relay']));
  });

  it('has a service in docker-compose.yml and a Deployment in k8s/, and the deploy checks cover it', () => {
    expect(appsMissingFromDeploy(apps, loadYaml(file('docker-compose.yml')), k8sObjects('k8s'))).toEqual([]);
    expect(Object.keys(APP_PORTS).sort()).toEqual([...apps].sort());
  });

  it('k8s-cluster points every app Deployment of the base at the Redis Cluster', () => {
    const patched = arr(obj(loadYaml(file('k8s-cluster/kustomization.yaml'))).patches)
      .map(obj)
      .filter((p) => str(p.patch)?.includes('REDIS_CLUSTER_NODES'))
      .map((p) => str(obj(p.target).name));
    for (const app of apps) expect(patched, app).toContain(str(obj(appDeployment(k8sObjects('k8s'), app)?.metadata).name));
  });

  it('the check names an app the files lack', () => {
    const compose = structuredClone(loadYaml(file('docker-compose.yml'))) as Obj;
    delete obj(compose.services).delivery;
    const objects = k8sObjects('k8s').filter((o) => !(o.kind === 'Deployment' && str(obj(o.metadata).name) === 'singleshot-decision'));
    expect(appsMissingFromDeploy(apps, compose, objects)).toEqual([
      'k8s: no Deployment runs dist/apps/decision/main.js',
      'docker-compose.yml: no service runs dist/apps/delivery/main.js',
    ]);
  });
});

function writeTemp(name: string, content: string): string {
  const path = join(tmp, name);
  writeFileSync(path, content);
  return path;
}
