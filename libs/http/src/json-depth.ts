/**
 * The nesting depth of a JSON text, scanned without parsing (so a hostile
 * 100,000-deep body costs one pass and no stack), or `Infinity` once it
 * passes `limit`. Brackets inside strings do not count. The text need not be
 * valid JSON: JSON.parse reports that afterwards.
 *
 * Why a limit at all: JSON.parse accepts thousands of levels, but later
 * recursive steps (BullMQ's JSON.stringify of the job data, templates) blow
 * the stack on them, and a RangeError that deep would be answered as a Redis outage.
 */
export function jsonDepth(text: string, limit: number): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      depth++;
      if (depth > max) {
        max = depth;
        if (max > limit) return Infinity;
      }
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  return max;
}
