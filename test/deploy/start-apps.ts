import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { appDeployment } from './k8s-checks';
import { obj, ROOT, str, type Obj } from './deploy-files';

/** Where `singleshot start` lists the apps it can run (`--only` takes these names). */
export const START_APPS_SOURCE = join(ROOT, 'apps/cli/src/run-apps.ts');

/**
 * The apps `singleshot start` runs, read from the CLI's own `APP_NAMES`
 * (not a copy kept here): a new app added there must show up in deploy/.
 * Throws when the declaration is not found, so the check can never pass on
 * an empty list.
 */
export function startApps(source = readFileSync(START_APPS_SOURCE, 'utf8')): string[] {
  const list = /export const APP_NAMES\s*=\s*\[([^\]]*)\]/.exec(source)?.[1];
  const names = [...(list ?? '').matchAll(/'([a-z][a-z0-9-]*)'/g)].map((m) => m[1] ?? '');
  if (names.length === 0) throw new Error(`no APP_NAMES list in ${START_APPS_SOURCE}`);
  return names;
}

/**
 * The apps with an entrypoint of their own (`apps/<name>/src/main.ts`, which
 * the build turns into `dist/apps/<name>/main.js`), except the CLI, which
 * runs the others rather than being one. An app that runs only alone (the
 * relay, which `start` folds into the ingest process) is not in APP_NAMES,
 * so this is how deploy/ learns of it.
 */
export function standaloneApps(appsDir = join(ROOT, 'apps')): string[] {
  return readdirSync(appsDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && entry.name !== 'cli' && existsSync(join(appsDir, entry.name, 'src', 'main.ts')))
    .map((entry) => entry.name)
    .sort();
}

/** Every app deploy/ must run: those `singleshot start` runs and those with their own entrypoint. */
export function deployedApps(appsDir = join(ROOT, 'apps'), startSource?: string): string[] {
  return [...new Set([...startApps(startSource), ...standaloneApps(appsDir)])];
}

/** Apps without a compose service running `dist/apps/<app>/main.js`, and without a Deployment in the k8s objects. */
export function appsMissingFromDeploy(apps: readonly string[], compose: unknown, k8sObjects: readonly Obj[]): string[] {
  const services = Object.values(obj(obj(compose).services)).map(obj);
  const runs = (service: Obj, app: string) => {
    const command = service.command;
    const words = Array.isArray(command) ? command.map(String) : (str(command) ?? '').split(/\s+/);
    return words.includes(`dist/apps/${app}/main.js`);
  };
  const problems: string[] = [];
  for (const app of apps) {
    if (!services.some((s) => runs(s, app))) problems.push(`docker-compose.yml: no service runs dist/apps/${app}/main.js`);
    if (!appDeployment(k8sObjects, app)) problems.push(`k8s: no Deployment runs dist/apps/${app}/main.js`);
  }
  return problems;
}
