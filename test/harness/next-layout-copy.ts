import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { REPO_ROOT } from './fleet';

/** A built copy of this repo's dist at the next layout: where its CLI is, and how to remove it. */
export interface NextLayoutCopy {
  root: string;
  cliMain: string;
  /** The layout the copy knows (this build's plus one). */
  layout: number;
  cleanup(): void;
}

/**
 * Copies `dist/` and raises the copy's layout by one, the way the next layout
 * change would: the layout version (TypeScript and every script's Lua
 * `LAYOUT`), one numbered migration to it (each shard gets a
 * `<prefix>:{sNN}:next-layout` key), and one behaviour changed: its claim
 * records the layout it ran under (`claimedUnder` on the operation), so a test
 * can tell which build claimed what. Each edit must apply where expected, or
 * this throws: a build that changed shape must not pass for the copy.
 * The copy sits under test-artifacts/ so it resolves this repo's node_modules.
 * The edits match both forms esbuild gives a module's constants (`var X = …`
 * and, in a bundle that initialises modules lazily, `X = …`).
 */
export function nextLayoutCopy(current: number): NextLayoutCopy {
  const next = current + 1;
  const root = join(REPO_ROOT, 'test-artifacts', `layout-${next}-${process.pid}-${randomBytes(3).toString('hex')}`);
  mkdirSync(root, { recursive: true });
  cpSync(join(REPO_ROOT, 'dist'), join(root, 'dist'), { recursive: true });
  const edits: { from: string; to: string; name: string }[] = [
    { name: 'layout version', from: `LAYOUT_VERSION = ${current};`, to: `LAYOUT_VERSION = ${next};` },
    { name: 'Lua LAYOUT', from: `local LAYOUT = '${current}'`, to: `local LAYOUT = '${next}'` },
    {
      name: 'migration',
      from: 'MIGRATIONS = [];',
      to: `MIGRATIONS = [{ to: ${next}, describe: "test copy: a key per shard", up: async (redis, keys, shard) => { await redis.set(keys.layout(shard).replace(/:layout$/, ":next-layout"), "${next}"); } }];`,
    },
    { name: 'claim records its layout', from: `'settleMs', o.settleMs, 'updatedAt', now`, to: `'settleMs', o.settleMs, 'claimedUnder', LAYOUT, 'updatedAt', now` },
  ];
  const applied = new Map(edits.map((e) => [e.name, 0]));
  const walk = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? walk(join(dir, d.name)) : d.name.endsWith('.js') ? [join(dir, d.name)] : []));
  for (const file of walk(join(root, 'dist'))) {
    let text = readFileSync(file, 'utf8');
    const before = text;
    for (const edit of edits) {
      const n = text.split(edit.from).length - 1;
      if (n > 0) {
        text = text.split(edit.from).join(edit.to);
        applied.set(edit.name, (applied.get(edit.name) ?? 0) + n);
      }
    }
    if (text !== before) writeFileSync(file, text);
  }
  const missing = [...applied].filter(([, n]) => n === 0).map(([name]) => name);
  if (missing.length > 0) {
    rmSync(root, { recursive: true, force: true });
    throw new Error(`the copy at layout ${next} could not be made: no ${missing.join(', ')} found in dist/ (rebuild with node tools/build.mjs)`);
  }
  return { root, cliMain: join(root, 'dist/apps/cli/main.js'), layout: next, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}
