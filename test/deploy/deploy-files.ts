import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';

/** Repository root and the deploy/ folder, whatever the test's working directory. */
export const ROOT = resolve(__dirname, '../..');
export const DEPLOY = join(ROOT, 'deploy');

/** A parsed YAML/JSON mapping, read defensively: deploy files are input, not typed code. */
export type Obj = Record<string, unknown>;

export function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The mapping at `value`, or an empty one (so chains like `obj(obj(x).spec).template` never throw). */
export function obj(value: unknown): Obj {
  return isObj(value) ? value : {};
}

export function arr(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Every file under `dir` whose name ends with one of `suffixes`, as absolute paths, sorted. */
export function listFiles(dir: string, suffixes: readonly string[]): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...listFiles(path, suffixes));
    else if (suffixes.some((suffix) => name.endsWith(suffix))) out.push(path);
  }
  return out.sort();
}

export function rel(path: string): string {
  return relative(ROOT, path);
}

/**
 * All documents of a YAML file. Merge keys (`<<: *anchor`) are resolved as
 * Docker Compose resolves them. Throws with every parse error and warning, so
 * a malformed file fails loudly instead of yielding a half-read document.
 */
export function loadYamlDocuments(file: string): unknown[] {
  const documents = parseAllDocuments(readFileSync(file, 'utf8'), { merge: true, prettyErrors: true });
  const list = Array.isArray(documents) ? documents : [documents];
  const problems = list.flatMap((doc) => [...doc.errors, ...doc.warnings].map((e) => e.message));
  if (problems.length > 0) throw new Error(`${rel(file)}:\n${problems.join('\n')}`);
  return list.map((doc) => doc.toJS({ maxAliasCount: 1000 }) as unknown).filter((doc) => doc !== null);
}

/** The single document of a YAML file. */
export function loadYaml(file: string): unknown {
  const documents = loadYamlDocuments(file);
  if (documents.length !== 1) throw new Error(`${rel(file)}: expected one YAML document, found ${documents.length}`);
  return documents[0];
}

export interface ToolResult {
  status: number | null;
  output: string;
  error?: Error;
}

/** Runs a command to completion (bounded), stdout and stderr together. */
export function runTool(command: string, args: readonly string[], options: { cwd?: string; timeoutMs?: number } = {}): ToolResult {
  const result = spawnSync(command, args, {
    cwd: options.cwd ?? ROOT,
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 60_000,
    env: { ...process.env, NO_COLOR: '1' },
  });
  return { status: result.status, output: `${result.stdout ?? ''}${result.stderr ?? ''}`, error: result.error };
}

/** Absolute path of `command` on PATH, or undefined. */
export function which(command: string): string | undefined {
  const result = runTool('sh', ['-c', `command -v ${command}`]);
  return result.status === 0 ? result.output.trim() || undefined : undefined;
}

/**
 * A copy of a raw config in which every `<key>File` secret path is replaced by
 * a placeholder file under `dir`, so the config can be validated outside its
 * container. Returns the copy and the original paths, for checking that the
 * deployment really mounts a file at each of them.
 */
export function withLocalSecretFiles(raw: unknown, dir: string): { config: unknown; secretPaths: string[] } {
  mkdirSync(dir, { recursive: true });
  const secretPaths: string[] = [];
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!isObj(node)) return node;
    const out: Obj = {};
    for (const [key, value] of Object.entries(node)) {
      if (/File$/.test(key) && typeof value === 'string') {
        secretPaths.push(value);
        const local = join(dir, `secret-${secretPaths.length}`);
        writeFileSync(local, 'placeholder-secret\n');
        out[key] = local;
      } else {
        out[key] = walk(value);
      }
    }
    return out;
  };
  return { config: walk(raw), secretPaths };
}
