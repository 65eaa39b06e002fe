import { createHash } from 'node:crypto';

/** Hex SHA-256 of a UTF-8 string or raw bytes. Pure computation, no I/O. */
export function sha256Hex(input: string | Uint8Array): string {
  return createHash('sha256').update(input).digest('hex');
}
