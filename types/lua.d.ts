/**
 * Lua scripts are bundled as text, their `--@include "file.lua"` lines expanded
 * (tools/lua-include.mjs, used by the esbuild build and the vitest transform).
 */
declare module '*.lua' {
  const source: string;
  export default source;
}
