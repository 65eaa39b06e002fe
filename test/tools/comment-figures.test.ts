import { readFileSync, readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// Comments in apps/ and libs/ say why, never a measured figure: a reading of
// one machine on one day goes stale while the comment stays. Defaults and
// limits are figures too, and belong there (`timeoutMs = 5000`, "at most 64
// KiB"). A figure (a number with a unit, or a fraction in words) is refused
// when the words around it make it a reading ("about 6 MB of heap", "a third
// fewer syscalls") and none right before it make it a default or a limit. The
// measurements behind design choices are in docs/benchmarks.md.
const ROOT = resolve(__dirname, '../..');

const FIGURE = /\d+(\.\d+)? ?(ms|MB|KiB|bytes|×|%)|\b(a|one) (quarter|third|fifth|tenth)\b|\b(half|twice) as\b|\b\d+(\.\d+)? ?(x|times)\b/g;
/** Words right before a figure that make it a reading: "about 6 MB", "costs about 70 bytes". */
const MEASURED_BEFORE = /(\b(about|around|roughly|approximately|took|takes|costs?|saves?)\s+(an?\s+)?|~\s*)$/i;
/** Words right after a figure that make it a reading: "6 MB of heap", "a third fewer". */
const MEASURED_AFTER = /^\)?\s*(of (heap|RSS|memory|CPU)|of \S+ time|fewer|less|more|faster|slower|cheaper)\b/i;
/** Words right before a figure that make it a default or a limit: "at most 64 KiB", "default 5000 ms". */
const LIMIT_BEFORE = /\b(default|at most|at least|up to|limit|budget|caps?|exceeds?|no more than|max(imum)?|min(imum)?|between|every|timeout|deadline|below|above|under|over|within)\b/i;

/** True for a line with a figure that reads as a measurement rather than a default or a limit. */
function measuredFigure(line: string): boolean {
  for (const m of line.matchAll(FIGURE)) {
    const before = line.slice(Math.max(0, m.index - 16), m.index);
    const after = line.slice(m.index + m[0].length, m.index + m[0].length + 24);
    if (LIMIT_BEFORE.test(before)) continue;
    if (MEASURED_BEFORE.test(before) || MEASURED_AFTER.test(after) || /\bmeasured\b/i.test(after)) return true;
  }
  return false;
}

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist') sourceFiles(path, out);
    } else if (/\.(ts|lua)$/.test(entry.name)) out.push(path);
  }
  return out;
}

describe('figures in apps/ and libs/', () => {
  it('tells a measured figure from a default or a limit', () => {
    for (const measured of [
      "form: no Hash object per call, about a quarter of `createHash`'s time",
      '// mjml is the largest package we ship (about 16 MB of heap and 0.6 s to load):',
      '// share its socket writes (a third fewer write syscalls per job).',
      '// The twilio SDK (about 6 MB of heap) loads on the first SMS, not in every process.',
      '   * encoding\'s 64-byte limit, and a field costs about 70 bytes where a set of',
    ]) {
      expect(measuredFigure(measured), measured).toBe(true);
    }
    for (const limit of [
      'const timeoutMs = 5000; // default 5000 ms, about a Redis failover',
      '/** 64 KiB keeps each synchronous slice of parser work short. */',
      '// at most 1.5 KiB, measured as MEMORY USAGE',
      '/** Body limit; default 26 MiB (providers accept mails up to 25 MB). */',
      '-- A new expiry goes a slack further out (1% of the retention)',
    ]) {
      expect(measuredFigure(limit), limit).toBe(false);
    }
  });

  it('has only defaults and limits', () => {
    const found: string[] = [];
    for (const file of [...sourceFiles(join(ROOT, 'apps')), ...sourceFiles(join(ROOT, 'libs'))]) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (measuredFigure(line)) found.push(`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
  });
});
