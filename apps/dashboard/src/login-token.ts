import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * Makes the dashboard's login token when no credentials are configured: 32
 * random bytes, written to `path` with mode 0600 (its folder 0700) so only
 * this user can read it. A new token on every start: a leaked one dies with
 * the process.
 */
export function generateLoginToken(path: string): { token: string; file: string } {
  const token = randomBytes(32).toString('base64url');
  const file = resolve(path);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  // writeFileSync keeps the mode of an existing file: set it explicitly.
  chmodSync(file, 0o600);
  return { token, file };
}

/** The cookie the login URL sets; `SameSite=Strict` keeps it off requests from other sites. */
export const SESSION_COOKIE = 'singleshot_dashboard';

/** The value of one cookie in a `Cookie` header, or undefined. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}
