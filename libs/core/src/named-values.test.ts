import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEAD_REASONS, ERROR_CODES, ERROR_CODE_FAMILIES, LOG_EVENTS, SUPPRESS_REASONS } from './index';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The backquoted names listed under `### <title>` in docs/contract.md, up to the next heading. */
function documented(title: string): string[] {
  const doc = readFileSync(join(ROOT, 'docs/contract.md'), 'utf8');
  const start = doc.indexOf(`\n### ${title}\n`);
  if (start < 0) throw new Error(`docs/contract.md has no "### ${title}" section`);
  const rest = doc.slice(start + title.length + 6);
  const end = rest.search(/\n#{1,3} /);
  const section = end < 0 ? rest : rest.slice(0, end);
  return [...section.matchAll(/^- `([^`]+)`:/gm)].map((m) => m[1] as string);
}

/** Production sources of apps/ and libs/ (no tests). */
function sources(): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      if (name === 'node_modules' || name === 'dist' || name === 'fixtures') continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts')) out.push({ file: path.slice(ROOT.length), text: readFileSync(path, 'utf8') });
    }
  };
  for (const top of ['apps', 'libs']) {
    for (const project of readdirSync(join(ROOT, top))) {
      const src = join(ROOT, top, project, 'src');
      try {
        if (statSync(src).isDirectory()) walk(src);
      } catch {
        // a project without src/
      }
    }
  }
  return out;
}

/** The object literal opening at `open` (a `{`), up to its matching `}`. */
function objectAt(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return text.slice(open, i + 1);
  }
  return text.slice(open);
}

interface LogCall {
  where: string;
  level: string;
  object: string | undefined;
}

/** Every `<receiver>.<level>(` log call (console excluded), with its first argument when it is an object literal. */
function logCalls(): LogCall[] {
  const calls: LogCall[] = [];
  for (const { file, text } of sources()) {
    for (const m of text.matchAll(/([A-Za-z_$][\w$]*)\??\.(fatal|error|warn|info|debug)\(\s*/g)) {
      if (m[1] === 'console') continue;
      const after = (m.index ?? 0) + m[0].length;
      const line = text.slice(0, m.index).split('\n').length;
      const first = text[after];
      // Only calls that look like a logger: an object literal or a string first.
      if (first !== '{' && first !== "'" && first !== '`' && first !== '"') continue;
      calls.push({ where: `${file}:${line}`, level: m[2] as string, object: first === '{' ? objectAt(text, after) : undefined });
    }
  }
  return calls;
}

/** The string literals an `event:` property of a log object can take (a ternary names both). */
function eventValues(object: string): string[] {
  const m = /\bevent\s*:\s*([^,}]+)/.exec(object);
  return m ? [...(m[1] as string).matchAll(/'([^']*)'/g)].map((v) => v[1] as string) : [];
}

describe('named values (docs/contract.md, "Named values")', () => {
  const catalogues: [string, Record<string, string>][] = [
    ['Error codes', ERROR_CODES],
    ['Dead reasons', DEAD_REASONS],
    ['Suppress reasons', SUPPRESS_REASONS],
    ['Log events', LOG_EVENTS],
  ];

  it.each(catalogues)('%s: docs list exactly the catalogue, once each', (title, catalogue) => {
    const listed = documented(title);
    expect(listed.length).toBeGreaterThan(0);
    expect(new Set(listed).size).toBe(listed.length);
    expect([...listed].sort()).toEqual(Object.keys(catalogue).sort());
  });

  it('every catalogue value has a one-line meaning', () => {
    for (const [, catalogue] of catalogues) {
      for (const [name, meaning] of Object.entries(catalogue)) {
        expect(meaning, name).not.toBe('');
        expect(meaning, name).not.toContain('\n');
      }
    }
  });
});

describe('log events in apps/ and libs/', () => {
  const calls = logCalls();

  it('finds the log calls (the scan is not empty)', () => {
    expect(calls.filter((c) => c.level === 'warn' || c.level === 'error').length).toBeGreaterThan(40);
  });

  it('every warn, error and fatal line has an object with an `event` field', () => {
    const missing = calls
      .filter((c) => c.level === 'warn' || c.level === 'error' || c.level === 'fatal')
      .filter((c) => c.object === undefined || eventValues(c.object).length === 0)
      .map((c) => c.where);
    expect(missing).toEqual([]);
  });

  it('every `event` logged is in LOG_EVENTS', () => {
    const unknown = calls.flatMap((c) => (c.object ? eventValues(c.object) : []).filter((e) => !(e in LOG_EVENTS)).map((e) => `${c.where}: ${e}`));
    expect(unknown).toEqual([]);
  });

  it('every LOG_EVENTS value is logged somewhere', () => {
    const logged = new Set(calls.flatMap((c) => (c.object ? eventValues(c.object) : [])));
    expect(Object.keys(LOG_EVENTS).filter((e) => !logged.has(e))).toEqual([]);
  });
});

/** The arguments of the call whose `(` is at `open`, split at top-level commas. */
function argumentsAt(text: string, open: number): string[] {
  const args: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let start = open + 1;
  for (let i = open; i < text.length; i++) {
    const c = text[i] as string;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === '(' || c === '{' || c === '[') depth++;
    else if (c === ')' || c === '}' || c === ']') {
      if (--depth === 0) return [...args, text.slice(start, i)].map((a) => a.trim());
    } else if (c === ',' && depth === 1) {
      args.push(text.slice(start, i));
      start = i + 1;
    }
  }
  return args;
}

const CODE_LITERAL = /^'([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)'(?: as const)?(?: satisfies \w+)?$/;

/**
 * Every code literal written in a code position: a `code:` or `errorCode:`
 * property, a literal checked with `satisfies ErrorCode`, any argument after the
 * message of an error constructor or a `super` call, and the code argument of
 * `errorFor`.
 */
function codeLiterals(): { where: string; code: string }[] {
  const found: { where: string; code: string }[] = [];
  for (const { file, text } of sources()) {
    const at = (index: number): string => `${file}:${text.slice(0, index).split('\n').length}`;
    for (const m of text.matchAll(/\b(?:code|errorCode)\??\s*[:=]\s*'([A-Z][A-Z0-9_]*)'/g)) found.push({ where: at(m.index ?? 0), code: m[1] as string });
    for (const m of text.matchAll(/'([A-Z][A-Z0-9_]*)'(?: as const)? satisfies (?:Any)?ErrorCode\b/g)) found.push({ where: at(m.index ?? 0), code: m[1] as string });
    for (const m of text.matchAll(/\b(?:new \w*Error|errorFor|super)\(/g)) {
      const open = (m.index ?? 0) + m[0].length - 1;
      for (const arg of argumentsAt(text, open).slice(1)) {
        const literal = CODE_LITERAL.exec(arg);
        if (literal) found.push({ where: at(m.index ?? 0), code: literal[1] as string });
      }
    }
  }
  return found;
}

describe('error codes in apps/ and libs/', () => {
  const literals = codeLiterals();

  it('finds the code literals (the scan is not empty)', () => {
    expect(literals.length).toBeGreaterThan(100);
    expect(literals.some((l) => l.code === 'BREAKER_OPEN')).toBe(true);
  });

  it('every code written in the code is in ERROR_CODES or one of its families', () => {
    const known = (code: string): boolean => code in ERROR_CODES || ERROR_CODE_FAMILIES.some((prefix) => code.startsWith(prefix));
    expect(literals.filter((l) => !known(l.code)).map((l) => `${l.where}: ${l.code}`)).toEqual([]);
  });
});
