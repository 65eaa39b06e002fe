import type { NextFunction, Request, Response } from 'express';
import type { DashboardConfig } from '@singleshot/config';
import { isLoopbackHost, safeEqual, sendError } from '@singleshot/http';
import type { Logger } from '@singleshot/observability';
import { DashboardStartError } from './errors';
import { SESSION_COOKIE, cookieValue } from './login-token';

export { isLoopbackHost, safeEqual };

/** Who may use the dashboard, from `dashboard.auth` (passwords and tokens may come from files). */
export interface DashboardCredentials {
  basic?: { username: string; password: string };
  token?: string;
  /** The token was generated at start (no credentials configured); the browser logs in through `/admin/login`. */
  generated?: boolean;
}

/** The authenticated caller, recorded with every replay and board action. */
export interface Principal {
  /** Basic auth user name, `token` for the bearer token (or its login cookie), `key:<name>` for a tenant's producer key, `anonymous` on an opted-out loopback dashboard. */
  who: string;
  scheme: 'basic' | 'bearer' | 'cookie' | 'none';
  /** A tenant's producer key (tenant-keys.ts): its tenant's messages and operations only. Undefined: an operator, who sees all. */
  tenant?: string;
}

/** Credentials from config, or undefined when none are configured. Empty strings count as absent. */
export function credentialsOf(auth: DashboardConfig['auth']): DashboardCredentials | undefined {
  if (!auth) return undefined;
  const creds: DashboardCredentials = {};
  if (auth.username && auth.password) creds.basic = { username: auth.username, password: auth.password };
  if (auth.token) creds.token = auth.token;
  return creds.basic || creds.token ? creds : undefined;
}

/**
 * The dashboard can replay dead operations, so it never listens beyond
 * loopback without credentials. Throws with what to do instead.
 */
export function assertSafeBinding(host: string, creds: DashboardCredentials | undefined, allowAnonymous = false): void {
  if (creds || isLoopbackHost(host)) return;
  if (allowAnonymous) {
    throw new DashboardStartError(
      `refusing to start the dashboard on ${host} with dashboard.allowAnonymous: anonymous access is for loopback only. ` +
        'Configure dashboard.auth, or listen on 127.0.0.1.',
      'DASHBOARD_AUTH_REQUIRED',
    );
  }
  throw new DashboardStartError(
    `refusing to start the dashboard on ${host} without credentials: it can replay dead operations. ` +
      'Set dashboard.auth.username with password or passwordFile, and/or dashboard.auth.token or tokenFile, ' +
      'or listen on loopback only (dashboard.host: 127.0.0.1).',
    'DASHBOARD_AUTH_REQUIRED',
  );
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
 * asks for the basic credentials) unless the request carries valid ones (an
 * `Authorization` header, or the token's login cookie); the principal goes to
 * `res.locals.principal`. `creds` undefined means `dashboard.allowAnonymous`
 * on loopback: every caller is `anonymous`. A tenant's producer key
 * (`tenants`, tenant-keys.ts) is its tenant's principal, anonymous dashboard or not.
 */
export function requireAuth(
  creds: DashboardCredentials | undefined,
  logger?: Pick<Logger, 'warn'>,
  tenants?: { principalOf(authorization: string | undefined): Principal | undefined },
) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const tenant = tenants?.principalOf(req.get('authorization'));
    if (tenant) {
      res.locals.principal = tenant;
      next();
      return;
    }
    if (!creds) {
      res.locals.principal = { who: 'anonymous', scheme: 'none' } satisfies Principal;
      next();
      return;
    }
    const cookie = creds.token !== undefined ? cookieValue(req.get('cookie'), SESSION_COOKIE) : undefined;
    const principal =
      verifyAuthorization(req.get('authorization'), creds) ??
      (cookie !== undefined && creds.token !== undefined && safeEqual(cookie, creds.token) ? ({ who: 'token', scheme: 'cookie' } satisfies Principal) : undefined);
    if (principal) {
      res.locals.principal = principal;
      next();
      return;
    }
    // Audit trail without the credentials: which scheme was tried, from where.
    const scheme = req.get('authorization')?.split(' ')[0]?.slice(0, 16) ?? 'none';
    logger?.warn({ event: 'dashboard_auth_failed', method: req.method, path: req.path, scheme, remote: req.socket.remoteAddress }, 'dashboard authentication failed');
    const challenges = [
      ...(creds.basic ? ['Basic realm="singleshot", charset="UTF-8"'] : []),
      ...(creds.token !== undefined ? ['Bearer realm="singleshot"'] : []),
    ];
    // One header per scheme: browsers do not all parse several challenges in one header.
    res.setHeader('www-authenticate', challenges);
    const how = creds.generated
      ? `the token in the dashboard's token file (Authorization: Bearer, or open /admin/login?token=<token>)`
      : 'basic credentials or a bearer token from dashboard.auth';
    sendError(res, 401, 'UNAUTHORIZED', `authentication required: ${how}`);
  };
}

/**
 * `GET /admin/login?token=…`: trades the token for an HttpOnly, SameSite=Strict
 * cookie and redirects to the board, so a browser can use a token-only
 * dashboard (a browser cannot send a bearer header by itself).
 */
export function loginHandler(creds: DashboardCredentials | undefined) {
  return (req: Request, res: Response): void => {
    const given = typeof req.query.token === 'string' ? req.query.token : '';
    if (!creds?.token || !given || !safeEqual(given, creds.token)) {
      sendError(res, 401, 'UNAUTHORIZED', 'the login token is missing or wrong');
      return;
    }
    res.setHeader('set-cookie', `${SESSION_COOKIE}=${encodeURIComponent(creds.token)}; HttpOnly; SameSite=Strict; Path=/`);
    res.setHeader('cache-control', 'no-store');
    res.redirect(302, '/admin/queues');
  };
}

export function principalOf(res: Response): Principal {
  return (res.locals.principal as Principal | undefined) ?? { who: 'anonymous', scheme: 'none' };
}
