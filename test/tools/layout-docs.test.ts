import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// docs/architecture.md and CONTRIBUTING.md each give every app and library a
// row of its own; a new folder under apps/ or libs/ without one, or a row left
// behind by a removed folder, fails here by name.
const ROOT = resolve(__dirname, '../..');
const DOCS = ['docs/architecture.md', 'CONTRIBUTING.md'];

/** `apps/<name>` and `libs/<name>` for every folder there is. */
function packagesOnDisk(root: string): string[] {
  return ['apps', 'libs'].flatMap((top) =>
    readdirSync(join(root, top), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `${top}/${entry.name}`),
  );
}

/** The packages a markdown text's tables name in a row's first cell: `` `apps/x` `` or `` `libs/x` ``. */
function packagesInTables(markdown: string): string[] {
  const named: string[] = [];
  for (const line of markdown.split('\n')) {
    const first = /^\|\s*`((?:apps|libs)\/[A-Za-z0-9._-]+?)\/?`\s*\|/.exec(line);
    if (first) named.push(first[1] as string);
  }
  return named;
}

/** What is wrong with a document's rows against the folders: missing, extra, or listed twice. */
function layoutProblems(doc: string, onDisk: readonly string[], inTables: readonly string[]): string[] {
  const listed = new Set(inTables);
  const present = new Set(onDisk);
  return [
    ...onDisk.filter((p) => !listed.has(p)).map((p) => `${doc}: no row for ${p}`),
    ...[...listed].filter((p) => !present.has(p)).map((p) => `${doc}: a row for ${p}, which does not exist`),
    ...[...listed].filter((p) => inTables.indexOf(p) !== inTables.lastIndexOf(p)).map((p) => `${doc}: ${p} has more than one row`),
  ];
}

describe('layout tables', () => {
  it('names a missing, an extra and a repeated row', () => {
    const md = ['| lib | holds |', '|---|---|', '| `libs/core` | keys |', '| `libs/gone/` | x |', '| `libs/core` | again |', 'text `libs/store` outside a table'].join('\n');
    expect(packagesInTables(md)).toEqual(['libs/core', 'libs/gone', 'libs/core']);
    expect(layoutProblems('X.md', ['libs/core', 'libs/store'], packagesInTables(md))).toEqual([
      'X.md: no row for libs/store',
      'X.md: a row for libs/gone, which does not exist',
      'X.md: libs/core has more than one row',
    ]);
  });

  const onDisk = packagesOnDisk(ROOT);

  it('finds the apps and libraries on disk', () => {
    expect(onDisk).toContain('apps/ingest');
    expect(onDisk).toContain('libs/core');
  });

  for (const doc of DOCS) {
    it(`${doc} has one row for every app and library, and none for anything else`, () => {
      const text = readFileSync(join(ROOT, doc), 'utf8');
      expect(layoutProblems(doc, onDisk, packagesInTables(text))).toEqual([]);
    });
  }
});
