import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ConfigIssue } from './config-error';
import { formatPath } from './config-error';
import { walkSecretKeys } from './secret-walk';

/**
 * `<key>File` → `<key>`: secrets kept out of the config file (Docker/Kubernetes
 * secrets, systemd credentials). The `<key>File` entry stays in the config as a
 * record of where the value came from.
 */
const SECRET_FILE_KEYS: Readonly<Record<string, { target: string; list?: boolean }>> = {
  passwordFile: { target: 'password' },
  secretFile: { target: 'secret' },
  tokenFile: { target: 'token' },
  caFile: { target: 'ca' },
  apiKeyFile: { target: 'apiKey' },
  authTokenFile: { target: 'authToken' },
  secretAccessKeyFile: { target: 'secretAccessKey' },
  signingKeyFile: { target: 'signingKey' },
  keyFile: { target: 'key' },
  publicKeyFile: { target: 'publicKey' },
  // A source's connection URL with its credentials (amqp://user:pass@…), kept out of the config.
  urlFile: { target: 'url' },
  // One secret per line; blank lines ignored.
  signingSecretsFile: { target: 'signingSecrets', list: true },
};

/**
 * Reads every `<key>File` in raw (unvalidated) input, in place, resolving
 * relative paths against `baseDir` (the config file's folder). Returns the
 * problems; never puts file contents into a message.
 */
export function resolveSecretFiles(raw: unknown, baseDir: string): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  walkSecretKeys(raw, SECRET_FILE_KEYS, (node, key, value, spec, path) => {
    const current = node[spec.target];
    // `signingSecrets: []` is the default's shape, not a competing value.
    const alreadySet = current !== undefined && !(Array.isArray(current) && current.length === 0);
    if (alreadySet) {
      issues.push({ path: formatPath([...path, key]), message: `give either ${spec.target} or ${key}, not both` });
      return;
    }
    const file = resolve(baseDir, value);
    let content: string;
    try {
      content = readFileSync(file, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      issues.push({ path: formatPath([...path, key]), message: `cannot read ${file} (${code})` });
      return;
    }
    const lines = content
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter(Boolean);
    if (lines.length === 0) {
      // An empty secret is almost always a mounting mistake; failing beats running unauthenticated.
      issues.push({ path: formatPath([...path, key]), message: `${file} is empty` });
      return;
    }
    node[spec.target] = spec.list ? lines : content.trim();
  });
  return issues;
}
