import type { ConfigIssue } from './config-error';
import { formatPath } from './config-error';
import { walkSecretKeys } from './secret-walk';

/** `<key>Env` → `<key>`: a secret read from a named environment variable (12-factor deployments). */
const SECRET_ENV_KEYS: Readonly<Record<string, string>> = { keyEnv: 'key' };

/**
 * Reads every `<key>Env` in raw (unvalidated) input, in place. Returns the
 * problems (variable unset or empty, or given together with the key itself);
 * never puts a variable's value into a message.
 */
export function resolveSecretEnv(raw: unknown, env: NodeJS.ProcessEnv): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  walkSecretKeys(raw, SECRET_ENV_KEYS, (node, key, value, target, path) => {
    if (node[target] !== undefined) {
      issues.push({ path: formatPath([...path, key]), message: `give only one of ${target}, ${target}File or ${key}` });
      return;
    }
    const secret = env[value]?.trim();
    if (!secret) {
      issues.push({ path: formatPath([...path, key]), message: `environment variable ${value} is unset or empty` });
      return;
    }
    node[target] = secret;
  });
  return issues;
}
