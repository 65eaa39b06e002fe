/** Lua scripts are bundled as text (esbuild `text` loader, vitest transform). */
declare module '*.lua' {
  const source: string;
  export default source;
}
