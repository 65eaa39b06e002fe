import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { listFiles, ROOT } from './deploy-files';

/** One Dockerfile instruction, continuation lines joined. */
export interface Instruction {
  keyword: string;
  args: string;
}

export interface Stage {
  name: string;
  base: string;
  instructions: Instruction[];
}

/** Splits a Dockerfile into stages (ARGs before the first FROM are dropped). */
export function parseDockerfile(text: string): Stage[] {
  const logical = text
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const stages: Stage[] = [];
  for (const line of logical) {
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const instruction = { keyword: keyword.toUpperCase(), args };
    if (instruction.keyword === 'FROM') {
      const [, base = '', name] = /^(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?/i.exec(args) ?? [];
      stages.push({ name: name ?? String(stages.length), base, instructions: [] });
    } else {
      stages.at(-1)?.instructions.push(instruction);
    }
  }
  return stages;
}

/** The JSON (exec) form of an instruction's arguments, or undefined for the shell form. */
export function execForm(args: string): string[] | undefined {
  try {
    const parsed: unknown = JSON.parse(args);
    return Array.isArray(parsed) && parsed.every((item) => typeof item === 'string') ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** COPY/ADD flags, sources and destination. */
export function copyParts(args: string): { flags: Record<string, string>; sources: string[]; dest: string } {
  const words = execForm(args) ?? args.split(/\s+/);
  const flags: Record<string, string> = {};
  while (words[0]?.startsWith('--')) {
    const [key = '', value = ''] = (words.shift() ?? '').slice(2).split('=');
    flags[key] = value;
  }
  const dest = words.pop() ?? '';
  return { flags, sources: words, dest };
}

function globToRegExp(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern.charAt(i);
    if (pattern.startsWith('**/', i)) {
      source += '(?:.*/)?';
      i += 2;
    } else if (pattern.startsWith('**', i)) {
      source += '.*';
      i += 1;
    } else if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else source += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/**
 * Whether a context-relative path is excluded by .dockerignore rules: the last
 * matching rule wins, and a rule matching a parent folder matches its contents
 * (Docker's semantics, `**` included).
 */
export function isIgnored(path: string, rules: readonly string[]): boolean {
  let ignored = false;
  const parts = path.split('/');
  for (const rule of rules) {
    const negated = rule.startsWith('!');
    const pattern = (negated ? rule.slice(1) : rule).replace(/^\/+/, '').replace(/\/+$/, '');
    const regexp = globToRegExp(pattern);
    if (parts.some((_, i) => regexp.test(parts.slice(0, i + 1).join('/')))) ignored = !negated;
  }
  return ignored;
}

export function dockerignoreRules(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
}

/**
 * Problems with the image definition: stages, non-root numeric user, node
 * entrypoint, healthcheck, production-only dependencies, and that everything
 * COPY takes from the context exists and survives the ignore file.
 */
export function checkDockerfile(text: string, ignoreRules: readonly string[]): string[] {
  const problems: string[] = [];
  const stages = parseDockerfile(text);
  if (stages.length < 2) problems.push(`multi-stage build expected, found ${stages.length} stage(s)`);
  const runtime = stages.at(-1);
  if (!runtime) return [...problems, 'no FROM'];
  const last = (keyword: string) => runtime.instructions.filter((i) => i.keyword === keyword).at(-1);
  const stageByName = new Map(stages.map((stage) => [stage.name, stage]));

  const user = last('USER')?.args ?? '';
  const uid = /^(\d+)(?::\d+)?$/.exec(user)?.[1];
  if (uid === undefined) problems.push(`runtime USER must be a numeric uid (runAsNonRoot can only verify numbers), got "${user}"`);
  else if (Number(uid) === 0) problems.push('runtime USER is root');

  const entrypoint = execForm(last('ENTRYPOINT')?.args ?? '');
  if (JSON.stringify(entrypoint) !== JSON.stringify(['node'])) problems.push('ENTRYPOINT must be ["node"] (exec form)');
  const cmd = execForm(last('CMD')?.args ?? '');
  if (!cmd?.[0]?.startsWith('dist/apps/')) problems.push('CMD must name a dist/apps/<app>/main.js script (exec form)');
  else if (!existsSync(join(ROOT, 'apps', cmd[0].split('/')[2] ?? ''))) problems.push(`CMD names an app that does not exist: ${cmd[0]}`);
  if (!/\bCMD\b/.test(last('HEALTHCHECK')?.args ?? '')) problems.push('runtime stage has no HEALTHCHECK CMD');

  const copies = runtime.instructions.filter((i) => i.keyword === 'COPY').map((i) => copyParts(i.args));
  const modules = copies.find((c) => c.flags.from && c.sources.some((s) => s.endsWith('node_modules')));
  const modulesStage = modules ? stageByName.get(modules.flags.from ?? '') : undefined;
  const prodInstall = modulesStage?.instructions.some(
    (i) => i.keyword === 'RUN' && /npm ci\b/.test(i.args) && i.args.includes('--omit=dev') && i.args.includes('--ignore-scripts'),
  );
  if (!prodInstall) problems.push('runtime node_modules must come from a stage running `npm ci --omit=dev --ignore-scripts`');
  const dist = copies.find((c) => c.flags.from && c.sources.some((s) => /(^|\/)dist$/.test(s)));
  const buildStage = dist ? stageByName.get(dist.flags.from ?? '') : undefined;
  if (!buildStage?.instructions.some((i) => i.keyword === 'RUN' && i.args.includes('npm run build'))) {
    problems.push('runtime dist/ must come from a stage running `npm run build`');
  }

  for (const stage of stages) {
    for (const instruction of stage.instructions.filter((i) => i.keyword === 'COPY' || i.keyword === 'ADD')) {
      const { flags, sources } = copyParts(instruction.args);
      if (flags.from) continue;
      for (const source of sources) problems.push(...checkContextPath(source, ignoreRules));
    }
  }
  return problems;
}

/** The Node.js major the image builds and runs on: the main line, the one `.ci/run` runs `npm test` on. */
export const IMAGE_NODE_MAJOR = 22;

/**
 * Problems with the Node.js base image (`ARG NODE_IMAGE=node:<major>-…`, the
 * one every stage starts FROM): it must be the Node major CI also tests, and
 * one package.json's `engines` admits.
 */
export function checkNodeImage(text: string, engines: string): string[] {
  const image = /^ARG\s+NODE_IMAGE=(\S+)/m.exec(text)?.[1];
  if (!image) return ['ARG NODE_IMAGE=node:<version>-… must name the base image'];
  const stages = parseDockerfile(text);
  const problems = stages.filter((s) => s.base !== '${NODE_IMAGE}').map((s) => `stage ${s.name} must start FROM \${NODE_IMAGE}, got ${s.base}`);
  const major = Number(/^node:(\d+)[.-]/.exec(image)?.[1]);
  if (major !== IMAGE_NODE_MAJOR) problems.push(`base image must be node:${IMAGE_NODE_MAJOR}-…, got ${image}`);
  const admitted = [...engines.matchAll(/(?:\^|>=)\s*(\d+)/g)].map((m) => Number(m[1]));
  if (!admitted.includes(major)) problems.push(`engines "${engines}" does not admit the image's Node ${major}`);
  return problems;
}

function checkContextPath(source: string, rules: readonly string[]): string[] {
  const path = join(ROOT, source);
  if (!existsSync(path)) return [`COPY source ${source} does not exist in the repository`];
  if (isIgnored(source, rules)) return [`COPY source ${source} is excluded by the dockerignore file`];
  if (!statSync(path).isDirectory()) return [];
  // Sources the build needs must survive the ignore rules; tests may not.
  return listFiles(path, ['.ts', '.mjs', '.js', '.json', '.lua'])
    .map((file) => file.slice(ROOT.length + 1))
    .filter((file) => !/\.test\.ts$|\/node_modules\/|\/fixtures\//.test(file) && isIgnored(file, rules))
    .map((file) => `${file} (under COPY source ${source}) is excluded by the dockerignore file`);
}
