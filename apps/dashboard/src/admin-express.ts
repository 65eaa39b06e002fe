import type { Request, Response, Router } from 'express';
import { principalOf } from './auth';
import type { AdminRoute } from './admin-route';
import type { AdminApiDeps } from './deps';
import { parseInput } from './params';

/**
 * Mounts one admin route on an Express router: its path parameters, query
 * and JSON body are parsed with the route's zod schemas first (a 400
 * `INVALID_REQUEST` naming each problem by where it is, e.g.
 * `query.limit`), then its handler answers. A throw reaches the admin API's
 * error middleware.
 */
export function mountAdminRoute(router: Router, route: AdminRoute, deps: AdminApiDeps): void {
  const handler = async (req: Request, res: Response): Promise<void> => {
    const answer = await route.handle(deps, {
      params: route.params ? parseInput(route.params, req.params, 'path') : undefined,
      query: route.query ? parseInput(route.query, req.query, 'query') : undefined,
      body: route.json ? parseInput(route.json.schema, req.body ?? {}, 'body') : undefined,
      who: principalOf(res).who,
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
