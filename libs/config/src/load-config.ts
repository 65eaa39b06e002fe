import { existsSync, readFileSync } from 'node:fs';
import { dirname, extname, resolve } from 'node:path';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import type { z } from 'zod';
import { ConfigError, formatPath, type ConfigIssue } from './config-error';
import { crossCheck } from './cross-checks';
import { DEFAULT_CONFIG_INPUT } from './defaults';
import { applyEnvOverrides } from './env-overrides';
import { isRawObject } from './raw';
import { configSchema, type Config } from './schema';
import { resolveSecretEnv } from './secret-env';
import { resolveSecretFiles } from './secret-files';
import { resolveTemplateFiles } from './template-files';

export const DEFAULT_CONFIG_FILE = 'singleshot.config.yaml';

export interface LoadedConfig {
  config: Config;
  /** Absolute path of the file, or `'defaults'` for the built-in config. */
  source: string;
}

export interface LoadConfigOptions {
  /** Config file (YAML, or JSON when it ends in `.json`). Default: `SINGLESHOT_CONFIG`, else `./singleshot.config.yaml` if present. */
  file?: string;
  /** Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Where relative paths start. Default `process.cwd()`. */
  cwd?: string;
}

/**
 * Loads, overrides from the environment, and validates the config. Throws
 * ConfigError listing every problem by path; a named file that is missing is
 * an error too (falling back to defaults would hide a deployment mistake).
 */
export function loadConfig(opts: LoadConfigOptions = {}): LoadedConfig {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  const named = opts.file ?? (env.SINGLESHOT_CONFIG?.trim() || undefined);
  let file: string | undefined;
  if (named !== undefined) file = resolve(cwd, named);
  else if (existsSync(resolve(cwd, DEFAULT_CONFIG_FILE))) file = resolve(cwd, DEFAULT_CONFIG_FILE);

  if (file === undefined) {
    return { config: parseConfig(DEFAULT_CONFIG_INPUT, env, { baseDir: cwd, source: 'defaults' }), source: 'defaults' };
  }
  const raw = readConfigFile(file);
  return { config: parseConfig(raw, env, { baseDir: dirname(file), source: file }), source: file };
}

/**
 * Validates a config object (as read from a file) with the environment's
 * overrides and `<key>File` secrets applied. `baseDir` anchors relative secret
 * file paths (default: the current directory). Does not modify `input`.
 */
export function parseConfig(input: unknown, env: NodeJS.ProcessEnv = {}, options: { baseDir?: string; source?: string } = {}): Config {
  const source = options.source ?? 'object';
  // An empty YAML file parses to null: treat it as "all defaults".
  const raw = input === null || input === undefined ? {} : structuredClone(input);
  if (!isRawObject(raw)) throw new ConfigError(source, [{ path: '', message: 'the config must be a mapping of sections' }]);

  const envOrigins = applyEnvOverrides(raw, env);
  const issues: ConfigIssue[] = [...resolveSecretFiles(raw, options.baseDir ?? process.cwd()), ...resolveSecretEnv(raw, env)];
  issues.push(...resolveTemplateFiles(raw, options.baseDir ?? process.cwd()));
  // An unreadable `passwordFile` also leaves `password` unset; report the cause only.
  const explained = new Set(issues.map((issue) => issue.path.replace(/(File|Env)$/, '')));
  const result = configSchema.safeParse(raw);
  if (!result.success) {
    issues.push(...toIssues(result.error.issues, envOrigins).filter((issue) => !explained.has(issue.path)));
  }
  issues.push(...crossCheck(raw));
  if (issues.length > 0 || !result.success) throw new ConfigError(source, issues);
  return result.data;
}

function toIssues(zodIssues: readonly z.core.$ZodIssue[], envOrigins: Map<string, string>): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const issue of zodIssues) {
    if (issue.code === 'unrecognized_keys') {
      // One line per key, at the key itself: that is where the typo is.
      for (const key of issue.keys) out.push({ path: formatPath([...issue.path, key]), message: 'unknown key' });
      continue;
    }
    const path = formatPath(issue.path);
    const origin = envOrigins.get(path);
    out.push({ path, message: origin ? `${issue.message} (from environment variable ${origin})` : issue.message });
  }
  return out;
}

/**
 * Reads and parses one file. Parser messages are reduced to a position: both
 * YAML and V8's JSON errors quote the offending text, which may be a secret.
 */
export function readConfigFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new ConfigError(file, [{ path: '', message: `cannot read config file (${code})` }]);
  }
  if (extname(file).toLowerCase() === '.json') {
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      const position = /position (\d+)/.exec((err as Error).message);
      const where = position ? ` at ${lineColumn(text, Number(position[1]))}` : '';
      throw new ConfigError(file, [{ path: '', message: `invalid JSON${where}` }]);
    }
  }
  try {
    return parseYaml(text) as unknown;
  } catch (err) {
    if (err instanceof YAMLParseError) {
      const where = err.linePos ? ` at line ${err.linePos[0].line}, column ${err.linePos[0].col}` : '';
      throw new ConfigError(file, [{ path: '', message: `invalid YAML (${err.code})${where}` }]);
    }
    throw err;
  }
}

function lineColumn(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n');
  return `line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}`;
}
