import type { Plugin } from 'esbuild';

/** The text of a Lua file with its `--@include "file.lua"` lines expanded. */
export function readLuaWithIncludes(file: string, seen?: Set<string>): string;
/** An esbuild plugin that loads `.lua` files as text with their includes expanded. */
export function luaIncludePlugin(): Plugin;
