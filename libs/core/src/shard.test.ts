import { sha256Hex } from './hash';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SHARDS, shardOf, shardTag } from './shard';

const key = (i: number) => sha256Hex(`k${i}`);

describe('shardOf', () => {
  it('is in range and stable', () => {
    for (const shards of [1, 3, DEFAULT_SHARDS, 1024]) {
      for (let i = 0; i < 200; i++) {
        const s = shardOf(key(i), shards);
        expect(Number.isInteger(s)).toBe(true);
        expect(s).toBeGreaterThanOrEqual(0);
        expect(s).toBeLessThan(shards);
        expect(shardOf(key(i), shards)).toBe(s);
      }
    }
  });

  it('is the first 8 hex digits mod N', () => {
    expect(shardOf('0000000a' + 'f'.repeat(56), 16)).toBe(10);
    expect(shardOf('ffffffff' + '0'.repeat(56), 16)).toBe(0xffffffff % 16);
    expect(shardOf('00000011' + '0'.repeat(56))).toBe(17 % DEFAULT_SHARDS);
  });

  it('spreads keys over every shard', () => {
    const seen = new Set(Array.from({ length: 500 }, (_, i) => shardOf(key(i), 16)));
    expect(seen.size).toBe(16);
  });

  it('throws on a non-hex key or a bad shard count', () => {
    expect(() => shardOf('zzzz', 16)).toThrow(RangeError);
    expect(() => shardOf('', 16)).toThrow(RangeError);
    expect(() => shardOf(key(1), 0)).toThrow(RangeError);
  });
});

describe('shardTag', () => {
  it('is a two-digit Redis Cluster hash tag', () => {
    expect(shardTag(7)).toBe('{s07}');
    expect(shardTag(0)).toBe('{s00}');
    expect(shardTag(15)).toBe('{s15}');
    expect(shardTag(123)).toBe('{s123}');
  });
});
