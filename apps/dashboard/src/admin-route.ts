import type { z } from 'zod';
import type { OperationDoc } from '@singleshot/http';
import type { AdminApiDeps } from './deps';

/** What an admin route's handler gets: its input as its schemas output it, and who asks. */
export interface AdminRequest<P, Q, B> {
  readonly params: P;
  readonly query: Q;
  readonly body: B;
  /** The authenticated principal (`anonymous` when the dashboard allows it). */
  readonly who: string;
  /**
   * The tenant of a tenant's producer key (tenancy.ts), whose data alone the
   * route may show or change; undefined for an operator. Only a route that
   * declares `tenants: 'scoped'` is reached with one.
   */
  readonly tenant: string | undefined;
  /** Sets a header of the answer (e.g. `retry-after` before a 503). */
  setHeader(name: string, value: string): void;
}

/** A handler's answer: sent as JSON with `status` (default 200). Refusals are thrown as `ApiError`. */
export interface AdminAnswer {
  status?: number;
  body: unknown;
}

/**
 * One admin API endpoint, declared once: the Express adapter mounts it
 * (validating params, query and body with its zod schemas first) and the
 * OpenAPI document is generated from it. `path` is Express-style and
 * relative to `/admin/api`.
 */
export interface AdminRoute {
  readonly method: 'GET' | 'POST' | 'DELETE';
  readonly path: string;
  readonly params?: z.ZodType;
  readonly query?: z.ZodType;
  readonly json?: { readonly schema: z.ZodType; readonly name: string };
  /**
   * `scoped`: the handler keeps a tenant's principal to its tenant's data,
   * and takes one. Absent: the route serves what every tenant shares, and a
   * tenant's principal gets 403 `TENANT_NOT_ALLOWED` before the handler runs.
   */
  readonly tenants?: 'scoped';
  /** The operation's summary and answers (the document adds the answers every admin route shares); its tag is its resource's. */
  readonly doc: AdminRouteDoc;
  readonly handle: (deps: AdminApiDeps, request: AdminRequest<unknown, unknown, unknown>) => Promise<AdminAnswer>;
}

/** An admin operation's document, but its tags: a resource's routes share one (`tagged`). */
export type AdminRouteDoc = Omit<OperationDoc, 'tags'> & { tags?: string[] };

type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

/** Declares an admin route; its handler is typed by its schemas. */
export function adminRoute<P extends z.ZodType | undefined = undefined, Q extends z.ZodType | undefined = undefined, B extends z.ZodType | undefined = undefined>(spec: {
  method: AdminRoute['method'];
  path: string;
  params?: P;
  query?: Q;
  json?: { schema: B & z.ZodType; name: string };
  tenants?: 'scoped';
  doc: AdminRouteDoc;
  handle(deps: AdminApiDeps, request: AdminRequest<Out<P>, Out<Q>, Out<B>>): Promise<AdminAnswer>;
}): AdminRoute {
  return spec as unknown as AdminRoute;
}

/** One resource's routes, each under the resource's tag in the document. */
export function tagged(tag: string, routes: readonly AdminRoute[]): AdminRoute[] {
  return routes.map((route) => ({ ...route, doc: { ...route.doc, tags: [tag] } }));
}
