import { hash } from 'node:crypto';

/**
 * Hex SHA-256 of a UTF-8 string or raw bytes. Pure computation, no I/O.
 *
 * `crypto.hash` (in every Node.js line `engines` admits) is the one-shot
 * form: no Hash object per call, much faster than `createHash` for the short
 * inputs keys are made of (message, operation and batch keys are hashed once
 * per arrival and per operation on the hot path; docs/benchmarks.md,
 * "Measurements behind design choices").
 */
export function sha256Hex(input: string | Uint8Array): string {
  return hash('sha256', input, 'hex');
}
