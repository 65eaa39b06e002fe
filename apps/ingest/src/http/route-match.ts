import type { IngestRoute } from './route';

interface Compiled {
  route: IngestRoute;
  /** Set for a path without parameters: compared as a string first. */
  literal: string | undefined;
  re: RegExp;
  names: string[];
}

/** A route matched to a request path, or a path parameter that does not decode. */
export type RouteMatch = { route: IngestRoute; params: Record<string, string> } | { badParam: string };

const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/**
 * The route table's matcher, with Express's default routing rules so every
 * URL it routed still arrives: paths compare case-insensitively, one
 * trailing slash is allowed, a `:name` segment takes one non-empty path
 * segment (percent-decoded), HEAD takes a GET route, and the first route in
 * table order wins.
 */
export class RouteMatcher {
  private readonly compiled: Compiled[];

  constructor(routes: readonly IngestRoute[]) {
    this.compiled = routes.map((route) => {
      const names: string[] = [];
      const source = route.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:(\w+)/g, (_m, name: string) => {
        names.push(name);
        return '([^/]+)';
      });
      return { route, literal: names.length === 0 ? route.path : undefined, re: new RegExp(`^${source}\\/?$`, 'i'), names };
    });
  }

  /** The route of `method` and `pathname` (no query), or undefined. */
  match(method: string | undefined, pathname: string): RouteMatch | undefined {
    const wanted = method === 'HEAD' ? 'GET' : method;
    for (const c of this.compiled) {
      if (c.route.method !== wanted) continue;
      if (c.literal === pathname) return { route: c.route, params: NO_PARAMS };
      const m = c.re.exec(pathname);
      if (!m) continue;
      if (c.names.length === 0) return { route: c.route, params: NO_PARAMS };
      const params: Record<string, string> = {};
      for (let i = 0; i < c.names.length; i++) {
        const raw = m[i + 1] as string;
        try {
          params[c.names[i] as string] = decodeURIComponent(raw);
        } catch {
          return { badParam: raw };
        }
      }
      return { route: c.route, params };
    }
    return undefined;
  }
}
