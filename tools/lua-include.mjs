// Lua scripts are bundled as text; a line `--@include "file.lua"` is replaced by
// that file (relative to the including one) before the text is bundled, so the
// scripts share fragments without a runtime loader. One function, used by
// esbuild (tools/build.mjs) and vitest (vitest.config.mts) alike.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

const INCLUDE = /^--@include "([^"]+)"[ \t]*$/gm;

/**
 * The text of a Lua file with its includes expanded (recursively, each file at
 * most once per script). Throws when an include is missing or includes itself.
 * @param {string} file absolute path
 * @returns {string}
 */
export function readLuaWithIncludes(file, seen = new Set()) {
  if (seen.has(file)) throw new Error(`lua include cycle or repeat: ${file}`);
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  return text.replace(INCLUDE, (_, rel) => {
    const target = resolve(dirname(file), rel);
    return `-- included from ${rel}\n${readLuaWithIncludes(target, seen).trimEnd()}\n-- end of ${rel}`;
  });
}

/**
 * An esbuild plugin that loads `.lua` files as text with their includes expanded.
 * @returns {import('esbuild').Plugin}
 */
export function luaIncludePlugin() {
  return {
    name: 'lua-include',
    setup(build) {
      build.onLoad({ filter: /\.lua$/ }, (args) => {
        const seen = new Set();
        const contents = readLuaWithIncludes(args.path, seen);
        return { contents, loader: 'text', watchFiles: [...seen] };
      });
    },
  };
}
