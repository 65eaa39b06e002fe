import { createHash, timingSafeEqual } from 'node:crypto';

/** sha256 of a secret, for comparing with `safeEqualDigest` without keeping the text around longer than needed. */
export function secretDigest(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/**
 * Compares digests, so neither the length nor the content of a secret leaks
 * through timing (timingSafeEqual needs equal lengths; digests always are).
 */
export function safeEqual(given: string, expected: string): boolean {
  return timingSafeEqual(secretDigest(given), secretDigest(expected));
}

/**
 * The index of the digest `given` matches, or -1. Every candidate is compared
 * (no early exit), so the timing says nothing about which key, if any, matched.
 */
export function findSecret(given: string, digests: readonly Buffer[]): number {
  const digest = secretDigest(given);
  let found = -1;
  digests.forEach((candidate, index) => {
    if (timingSafeEqual(digest, candidate) && found < 0) found = index;
  });
  return found;
}
