import type { Request, Response, Router } from 'express';
import { principalOf } from './auth';
import type { AdminRoute } from './admin-route';
import type { AdminApiDeps } from './deps';
import { parseInput } from './params';
import { refuseTenant } from './tenancy';

/**
 * Mounts one admin route on an Express router: its path parameters, query
 * and JSON body are parsed with the route's zod schemas first (a 400
 * `INVALID_REQUEST` naming each problem by where it is, e.g.
 * `query.limit`), then its handler answers. A throw reaches the admin API's
 * error middleware. A tenant's principal reaches only the routes that keep it
 * to its tenant (`tenants: 'scoped'`).
 */
export function mountAdminRoute(router: Router, route: AdminRoute, deps: AdminApiDeps): void {
  const handler = async (req: Request, res: Response): Promise<void> => {
    const principal = principalOf(res);
    if (principal.tenant !== undefined && route.tenants !== 'scoped') return refuseTenant(res, principal.who, principal.tenant, `${route.method} ${route.path}`);
    const answer = await route.handle(deps, {
      params: route.params ? parseInput(route.params, req.params, 'path') : undefined,
      query: route.query ? parseInput(route.query, req.query, 'query') : undefined,
      body: route.json ? parseInput(route.json.schema, req.body ?? {}, 'body') : undefined,
      who: principal.who,
      tenant: principal.tenant,
      setHeader: (name, value) => void res.setHeader(name, value),
    });
    res.status(answer.status ?? 200).json(answer.body);
  };
  switch (route.method) {
    case 'GET':
      return void router.get(route.path, handler);
    case 'POST':
      return void router.post(route.path, handler);
    case 'DELETE':
      return void router.delete(route.path, handler);
  }
}
