import type { ConfigIssue } from './config-error';
import { formatPath } from './config-error';
import { isRawObject } from './raw';

/** `<key>Env` → `<key>`: a secret read from a named environment variable (12-factor deployments). */
const SECRET_ENV_KEYS: Readonly<Record<string, string>> = { keyEnv: 'key' };

/**
 * Reads every `<key>Env` in raw (unvalidated) input, in place. Returns the
 * problems (variable unset or empty, or given together with the key itself);
 * never puts a variable's value into a message.
 */
export function resolveSecretEnv(raw: unknown, env: NodeJS.ProcessEnv): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const walk = (node: unknown, path: PropertyKey[]): void => {
    if (Array.isArray(node)) {
      node.forEach((item, index) => walk(item, [...path, index]));
      return;
    }
    if (!isRawObject(node)) return;
    for (const [key, value] of Object.entries(node)) {
      const target = SECRET_ENV_KEYS[key];
      if (!target || typeof value !== 'string' || value === '') {
        walk(value, [...path, key]);
        continue;
      }
      if (node[target] !== undefined) {
        issues.push({ path: formatPath([...path, key]), message: `give only one of ${target}, ${target}File or ${key}` });
        continue;
      }
      const secret = env[value]?.trim();
      if (!secret) {
        issues.push({ path: formatPath([...path, key]), message: `environment variable ${value} is unset or empty` });
        continue;
      }
      node[target] = secret;
    }
  };
  walk(raw, []);
  return issues;
}
