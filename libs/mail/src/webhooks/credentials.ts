import { createHash, timingSafeEqual } from 'node:crypto';
import { headerOf } from './form-body';
import type { WebhookRequest } from './types';

/**
 * Compares two secrets in time independent of where they differ. Both sides
 * are hashed first so their lengths match (timingSafeEqual requires it) and
 * the length of the expected secret does not leak either.
 */
export function secretEquals(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b) && given.length === expected.length;
}

/** Credentials of an `Authorization: Basic …` header, or null. */
export function basicAuth(req: WebhookRequest): { username: string; password: string } | null {
  const header = headerOf(req, 'authorization');
  const m = header ? /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header) : null;
  if (!m) return null;
  const decoded = Buffer.from(m[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) return null;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** True when the request carries exactly these basic-auth credentials. */
export function basicAuthMatches(req: WebhookRequest, expected: { username: string; password: string }): boolean {
  const given = basicAuth(req);
  if (!given) return false;
  // Evaluate both: no early exit that tells which half was wrong.
  const user = secretEquals(given.username, expected.username);
  const pass = secretEquals(given.password, expected.password);
  return user && pass;
}
