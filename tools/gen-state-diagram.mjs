// Writes the state diagram of docs/protocol.md ("Operation states") from the
// transition table (libs/core/src/lifecycle.ts), between its two marker lines.
// `npm run docs:states` runs it; libs/core/src/lifecycle.test.ts fails when the
// page is out of date.
import { readFileSync, writeFileSync } from 'node:fs';
import { importTs } from './import-ts.mjs';

const PAGE = 'docs/protocol.md';
const BEGIN = '<!-- state diagram: generated from TRANSITIONS in libs/core/src/lifecycle.ts by npm run docs:states -->';
const END = '<!-- end of state diagram -->';

const { stateDiagram } = await importTs('libs/core/src/lifecycle.ts');
const page = readFileSync(PAGE, 'utf8');
const start = page.indexOf(BEGIN);
const end = page.indexOf(END);
if (start < 0 || end < start) throw new Error(`${PAGE} has no "${BEGIN}" … "${END}" block`);
writeFileSync(PAGE, `${page.slice(0, start + BEGIN.length)}\n${stateDiagram()}\n${page.slice(end)}`);
console.log(`wrote the state diagram of ${PAGE}`);
