import type { NextFunction, Request, Response } from 'express';
import { sendError } from '@singleshot/http';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Cross-site request forgery guard for the admin API and Bull Board. A page on
 * another site can make the operator's browser send a form POST (with its
 * saved basic credentials or cookie); the browser then says where the request
 * came from, and any state-changing request whose `Origin` is not the
 * dashboard's own (or one of `allowedOrigins`), or whose `Sec-Fetch-Site` is
 * neither `same-origin` nor `none` (typed by the user), is refused with 403.
 * Requests with neither header come from non-browser clients (curl, the CLI),
 * which a web page cannot impersonate.
 */
export function originGuard(allowedOrigins: readonly string[] = []) {
  const allowed = new Set(allowedOrigins.map((o) => new URL(o).origin));
  return (req: Request, res: Response, next: NextFunction): void => {
    if (SAFE_METHODS.has(req.method)) return next();
    const site = req.get('sec-fetch-site');
    const origin = req.get('origin');
    const own = `${req.protocol}://${req.get('host') ?? ''}`;
    const originOk = origin === undefined || origin === own || allowed.has(origin);
    const siteOk = site === undefined || site === 'same-origin' || site === 'none' || (origin !== undefined && allowed.has(origin));
    if (originOk && siteOk) return next();
    sendError(res, 403, 'CROSS_ORIGIN', 'state-changing requests must come from the dashboard itself', {
      origin: origin ?? null,
      secFetchSite: site ?? null,
    });
  };
}
