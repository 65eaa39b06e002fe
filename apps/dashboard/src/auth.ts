import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { NextFunction, Request, Response } from 'express';
import type { DashboardConfig } from '@singleshot/config';
import type { Logger } from '@singleshot/observability';
import { DashboardStartError, sendError } from './errors';

/** Who may use the dashboard, from `dashboard.auth` (passwords and tokens may come from files). */
export interface DashboardCredentials {
  basic?: { username: string; password: string };
  token?: string;
}

/** The authenticated caller, recorded with every replay and board action. */
export interface Principal {
  /** Basic auth user name, `token` for the bearer token, `anonymous` on an open loopback dashboard. */
  who: string;
  scheme: 'basic' | 'bearer' | 'none';
}

/** Credentials from config, or undefined when none are configured. Empty strings count as absent. */
export function credentialsOf(auth: DashboardConfig['auth']): DashboardCredentials | undefined {
  if (!auth) return undefined;
  const creds: DashboardCredentials = {};
  if (auth.username && auth.password) creds.basic = { username: auth.username, password: auth.password };
  if (auth.token) creds.token = auth.token;
  return creds.basic || creds.token ? creds : undefined;
}

/** `localhost`, 127.0.0.0/8, `::1` and IPv4-mapped loopback. `0.0.0.0` and `::` are every interface, not loopback. */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[|\]$/g, '');
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || /^::ffff:127\./.test(h);
  return false;
}

/**
 * The dashboard can replay dead operations, so it never listens beyond
 * loopback without credentials. Throws with what to do instead.
 */
export function assertSafeBinding(host: string, creds: DashboardCredentials | undefined): void {
  if (creds || isLoopbackHost(host)) return;
  throw new DashboardStartError(
    `refusing to start the dashboard on ${host} without credentials: it can replay dead operations. ` +
      'Set dashboard.auth.username with password or passwordFile, and/or dashboard.auth.token or tokenFile, ' +
      'or listen on loopback only (dashboard.host: 127.0.0.1).',
    'DASHBOARD_AUTH_REQUIRED',
  );
}

/**
 * Compares digests, so neither the length nor the content of a secret leaks
 * through timing (timingSafeEqual needs equal lengths; digests always are).
 */
export function safeEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/** Checks an `Authorization` header value; the principal, or undefined when it does not match. */
export function verifyAuthorization(header: string | undefined, creds: DashboardCredentials): Principal | undefined {
  if (!header) return undefined;
  const space = header.indexOf(' ');
  if (space < 0) return undefined;
  const scheme = header.slice(0, space).toLowerCase();
  const value = header.slice(space + 1).trim();
  if (scheme === 'bearer' && creds.token !== undefined) {
    return safeEqual(value, creds.token) ? { who: 'token', scheme: 'bearer' } : undefined;
  }
  if (scheme === 'basic' && creds.basic) {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return undefined;
    const username = decoded.slice(0, colon);
    // Both comparisons always run: which half was wrong must not show in the timing.
    const userOk = safeEqual(username, creds.basic.username);
    const passwordOk = safeEqual(decoded.slice(colon + 1), creds.basic.password);
    return userOk && passwordOk ? { who: username, scheme: 'basic' } : undefined;
  }
  return undefined;
}

/**
 * Express middleware: 401 with a `WWW-Authenticate` challenge (so a browser
 * asks for the basic credentials) unless the request carries valid ones; the
 * principal goes to `res.locals.principal`. Without configured credentials
 * (allowed on loopback only) every caller is `anonymous`.
 */
export function requireAuth(creds: DashboardCredentials | undefined, logger?: Pick<Logger, 'warn'>) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!creds) {
      res.locals.principal = { who: 'anonymous', scheme: 'none' } satisfies Principal;
      next();
      return;
    }
    const principal = verifyAuthorization(req.get('authorization'), creds);
    if (principal) {
      res.locals.principal = principal;
      next();
      return;
    }
    // Audit trail without the credentials: which scheme was tried, from where.
    const scheme = req.get('authorization')?.split(' ')[0]?.slice(0, 16) ?? 'none';
    logger?.warn({ method: req.method, path: req.path, scheme, remote: req.socket.remoteAddress }, 'dashboard authentication failed');
    const challenges = [
      ...(creds.basic ? ['Basic realm="singleshot", charset="UTF-8"'] : []),
      ...(creds.token !== undefined ? ['Bearer realm="singleshot"'] : []),
    ];
    // One header per scheme: browsers do not all parse several challenges in one header.
    res.setHeader('www-authenticate', challenges);
    sendError(res, 401, 'UNAUTHORIZED', 'authentication required: basic credentials or a bearer token from dashboard.auth');
  };
}

export function principalOf(res: Response): Principal {
  return (res.locals.principal as Principal | undefined) ?? { who: 'anonymous', scheme: 'none' };
}
