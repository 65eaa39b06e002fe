/** An integer literal as JSON writes it (no fraction, no exponent). */
const INTEGER = /^-?(?:0|[1-9][0-9]*)$/;

const isNumberChar = (c: number) => (c >= 0x30 && c <= 0x39) || c === 0x2d /* - */ || c === 0x2b /* + */ || c === 0x2e /* . */ || c === 0x65 /* e */ || c === 0x45; /* E */

/**
 * JSON.parse, except that an integer a JS number cannot hold exactly (beyond
 * ±2^53) is kept as the string of its digits: providers send 64-bit ids as
 * JSON numbers, and two of them that round to the same double would be one
 * event. Integers that fit, fractions and exponents parse as JSON.parse
 * parses them.
 *
 * Done as one scan before JSON.parse, which still does all the validation:
 * a reviver with `context.source` would see the digits too, but only on
 * Node.js 21 and later, and this must behave the same on every Node.js the
 * project supports. Only a value is quoted, never a number where an object
 * key belongs, so text that JSON.parse refuses is still refused.
 *
 * @throws SyntaxError as JSON.parse does.
 */
export function parseJsonExact(text: string): unknown {
  return JSON.parse(quoteWideIntegers(text));
}

/** The text with every integer value beyond ±2^53 written as a string of its digits. */
function quoteWideIntegers(text: string): string {
  const out: string[] = [];
  let from = 0;
  // Open containers: true for an object. A number where a key belongs is left to JSON.parse to refuse.
  const objects: boolean[] = [];
  let keyNext = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c /* \ */) i++;
        else if (s === 0x22) break;
      }
      continue;
    }
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      objects.push(c === 0x7b);
      keyNext = c === 0x7b;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      objects.pop();
      keyNext = false;
    } else if (c === 0x2c /* , */) keyNext = objects[objects.length - 1] === true;
    else if (c === 0x3a /* : */) keyNext = false;
    else if (isNumberChar(c)) {
      let end = i + 1;
      while (end < text.length && isNumberChar(text.charCodeAt(end))) end++;
      const token = text.slice(i, end);
      if (!keyNext && INTEGER.test(token) && !Number.isSafeInteger(Number(token))) {
        out.push(text.slice(from, i), '"', token, '"');
        from = end;
      }
      i = end - 1;
    }
  }
  if (from === 0) return text;
  out.push(text.slice(from));
  return out.join('');
}
