import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJsonExact } from './json-exact';

describe('parseJsonExact', () => {
  it('keeps 64-bit ids that round to the same double as the digits sent', () => {
    const soft = parseJsonExact('{"RecordType":"Bounce","ID":4323372036854775807,"Type":"SoftBounce"}') as { ID: unknown };
    const hard = parseJsonExact('{"RecordType":"Bounce","ID": 4323372036854775806 ,"Type":"HardBounce"}') as { ID: unknown };
    expect(soft.ID).toBe('4323372036854775807');
    expect(hard.ID).toBe('4323372036854775806');
    // What JSON.parse makes of them: one number.
    expect((JSON.parse('{"ID":4323372036854775807}') as { ID: number }).ID).toBe((JSON.parse('{"ID":4323372036854775806}') as { ID: number }).ID);
  });

  it('quotes exactly the integers beyond ±2^53, wherever a value may stand', () => {
    expect(parseJsonExact('[9007199254740991, 9007199254740992, -9007199254740991, -9007199254740993, 0, -0]')).toEqual([
      9007199254740991,
      '9007199254740992',
      -9007199254740991,
      '-9007199254740993',
      0,
      -0,
    ]);
    expect(parseJsonExact('{"a":{"b":[1,{"c":18446744073709551615}]},"d":18446744073709551616}')).toEqual({ a: { b: [1, { c: '18446744073709551615' }] }, d: '18446744073709551616' });
    expect(parseJsonExact('18446744073709551615')).toBe('18446744073709551615');
  });

  it('leaves fractions, exponents and digits inside strings as JSON.parse reads them', () => {
    const text = '{"t":1521472262.908181,"e":1e300,"big":12345678901234567890.5,"s":"id 4323372036854775807","q":"a\\"1 4323372036854775807\\\\","k":true}';
    expect(parseJsonExact(text)).toEqual(JSON.parse(text));
    expect(parseJsonExact('{"4323372036854775807":1}')).toEqual({ '4323372036854775807': 1 });
  });

  it('refuses what JSON.parse refuses, a wide integer where a key belongs included', () => {
    for (const bad of ['{12345678901234567890:1}', '{"a":1,12345678901234567890:2}', '[012345678901234567890]', '[1 12345678901234567890]', '{"a":-}', '', '{"a":"12345678901234567890}']) {
      expect(() => JSON.parse(bad), bad).toThrow(SyntaxError);
      expect(() => parseJsonExact(bad), bad).toThrow(SyntaxError);
    }
  });

  it('parses any JSON without wide integers exactly as JSON.parse', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        // A double beyond 2^53 that JSON.stringify writes as digits is a wide integer: covered below.
        const text = JSON.stringify(value, (_, x: unknown) => (typeof x === 'number' && Number.isInteger(x) && !Number.isSafeInteger(x) ? 1.5 : x));
        expect(parseJsonExact(text)).toEqual(JSON.parse(text));
      }),
      { numRuns: 500 },
    );
  });

  it('keeps the digits of every wide integer in any document', () => {
    const wide = fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).filter((n) => n > 2n ** 53n - 1n || n < -(2n ** 53n - 1n));
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.string(), wide), { minLength: 1, maxLength: 5 }), (pairs) => {
        const text = `{${pairs.map(([k, n], i) => `${JSON.stringify(`${i}${k}`)}:[${n}]`).join(',')}}`;
        const parsed = parseJsonExact(text) as Record<string, [string]>;
        expect(pairs.map(([k, n], i) => parsed[`${i}${k}`]?.[0] === n.toString())).not.toContain(false);
      }),
      { numRuns: 300 },
    );
  });
});
