#!/usr/bin/env node
// Import cycles among the TypeScript files of apps/, libs/, bench/ and test/
// (tests included): static imports and re-exports, `import type` included,
// relative specifiers and the tsconfig.base.json path aliases (@singleshot/*).
// A cycle makes module initialisation order depend on which file loads first,
// so `npm run lint` fails on any. usage: node tools/check-cycles.mjs [ROOT]
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const DIRS = ['apps', 'libs', 'bench', 'test'];
const SKIP_DIRS = new Set(['node_modules', 'dist', '.nx']);
const IMPORT = /(?:^|[;\s])(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/g;

const isSource = (name) => /\.m?ts$/.test(name) && !name.endsWith('.d.ts') && !name.endsWith('.d.mts');

function walk(dir, out) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) walk(path, out);
    } else if (isSource(entry.name)) out.push(path);
  }
}

/** tsconfig.base.json's `paths` as [prefix, wildcard?, target] (absolute targets). */
function readAliases(root) {
  const file = join(root, 'tsconfig.base.json');
  if (!existsSync(file)) return [];
  const paths = JSON.parse(readFileSync(file, 'utf8')).compilerOptions?.paths ?? {};
  return Object.entries(paths).map(([name, [target]]) => {
    const wildcard = name.endsWith('/*');
    return { prefix: wildcard ? name.slice(0, -1) : name, wildcard, target: resolve(root, wildcard ? target.slice(0, -1) : target) };
  });
}

/** The file a specifier names, or undefined (a package, or a non-TypeScript file). */
function resolveSpecifier(spec, from, aliases, known) {
  let base;
  if (spec.startsWith('.')) base = resolve(dirname(from), spec);
  else {
    const alias = aliases.find((a) => (a.wildcard ? spec.startsWith(a.prefix) : spec === a.prefix));
    if (!alias) return undefined;
    base = alias.wildcard ? join(alias.target, spec.slice(alias.prefix.length)) : alias.target;
  }
  const stem = base.replace(/\.(m?)js$/, '.$1ts');
  for (const candidate of [stem, `${base}.ts`, `${base}.mts`, join(base, 'index.ts')]) {
    if (known.has(candidate)) return candidate;
  }
  return undefined;
}

/** The import graph: file → files it imports (absolute paths). */
export function importGraph(root) {
  const files = [];
  for (const dir of DIRS) {
    const path = join(root, dir);
    if (existsSync(path) && statSync(path).isDirectory()) walk(path, files);
  }
  const known = new Set(files);
  const aliases = readAliases(root);
  const graph = new Map();
  for (const file of files) {
    // Comments are dropped so an import shown in a doc comment is not an edge.
    const src = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
    const deps = new Set();
    for (const m of src.matchAll(IMPORT)) {
      const dep = resolveSpecifier(m[1], file, aliases, known);
      if (dep && dep !== file) deps.add(dep);
    }
    graph.set(file, [...deps]);
  }
  return graph;
}

/** One shortest cycle through `start` inside `members` (breadth-first), as a path ending where it began. */
function shortestCycle(graph, start, members) {
  const previous = new Map([[start, undefined]]);
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift();
    for (const next of graph.get(node) ?? []) {
      if (!members.has(next)) continue;
      if (next === start) {
        const path = [start];
        for (let at = node; at !== undefined && at !== start; at = previous.get(at)) path.unshift(at);
        path.unshift(start);
        return path;
      }
      if (!previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  return [start, start];
}

/**
 * The import cycles under `root`: one entry per strongly connected component
 * of more than one file, with one concrete cycle through it (paths relative to root).
 */
export function findCycles(root) {
  root = resolve(root);
  const graph = importGraph(root);
  // Tarjan's strongly connected components, iterative so deep import chains cannot overflow the stack.
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const components = [];
  let counter = 0;
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work = [[start, 0]];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const [node, i] = frame;
      const deps = graph.get(node);
      if (i < deps.length) {
        frame[1]++;
        const next = deps[i];
        if (!index.has(next)) {
          index.set(next, counter);
          low.set(next, counter++);
          stack.push(next);
          onStack.add(next);
          work.push([next, 0]);
        } else if (onStack.has(next)) low.set(node, Math.min(low.get(node), index.get(next)));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent), low.get(node)));
      }
      if (low.get(node) === index.get(node)) {
        const component = [];
        let member;
        do {
          member = stack.pop();
          onStack.delete(member);
          component.push(member);
        } while (member !== node);
        if (component.length > 1) components.push(component);
      }
    }
  }
  return components.map((component) => {
    const sorted = [...component].sort();
    const members = new Set(component);
    return {
      files: sorted.map((f) => relative(root, f)),
      cycle: shortestCycle(graph, sorted[0], members).map((f) => relative(root, f)),
    };
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..'));
  const cycles = findCycles(root);
  for (const c of cycles) console.error(`import cycle (${c.files.length} files): ${c.cycle.join(' -> ')}`);
  if (cycles.length > 0) {
    console.error(`${cycles.length} import cycle(s) under apps/, libs/, bench/, test/: break each (move the shared part to a file both import)`);
    process.exit(1);
  }
}
