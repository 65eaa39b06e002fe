import { sha256Hex } from '@singleshot/core';

/**
 * A small seeded PRNG (mulberry32). Every schedule of a chaos run draws from a
 * stream named after what it decides (`workload`, `faults`, `sink:<key>`), so
 * adding a draw to one schedule never shifts another: the same seed gives the
 * same events, the same fault timeline and the same provider answers.
 */
export interface Prng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  /** A float in [min, max). */
  between(min: number, max: number): number;
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** A copy of `items` in a seeded order (Fisher–Yates). */
  shuffle<T>(items: readonly T[]): T[];
}

/** A 32-bit seed from any string, so `--seed 7` and `--seed fuzz-7` both work. */
export function seedOf(text: string): number {
  // The first 32 bits of the digest, big-endian.
  return Number.parseInt(sha256Hex(text).slice(0, 8), 16);
}

export function prng(seed: string | number, stream: string): Prng {
  let state = seedOf(`${seed}/${stream}`);
  const next = (): number => {
    state = (state + 0x6d2b79f5) | 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  return {
    next,
    int,
    between: (min, max) => min + next() * (max - min),
    chance: (p) => next() < p,
    pick: <T>(items: readonly T[]): T => {
      if (items.length === 0) throw new RangeError('pick from an empty list');
      return items[int(0, items.length - 1)] as T;
    },
    shuffle: <T>(items: readonly T[]): T[] => {
      const out = [...items];
      for (let i = out.length - 1; i > 0; i--) {
        const j = int(0, i);
        [out[i], out[j]] = [out[j] as T, out[i] as T];
      }
      return out;
    },
  };
}
