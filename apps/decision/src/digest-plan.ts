import { digestGroupId, normalizeRecipient, tenantKey, type DecideJobData } from '@singleshot/core';
import type { DigestConfig, MailboxConfig, RouteConfig } from '@singleshot/config';
import { compileTemplate, type CompiledTemplate } from '@singleshot/templates';
import { recipientsOf, templateContext } from './context';
import { routeMatches } from './route-match';
import { dueAt } from './timing';

/** One digest membership a message makes: its group and its item. */
export interface DigestJoinPlan {
  route: RouteConfig & { digest: DigestConfig };
  recipient: string;
  /** The rendered digest key ('' for the recipient alone). */
  key: string;
  group: string;
  /** The item's JSON, at most the route's `maxItemBytes`. */
  item: string;
}

const keyTemplates = new WeakMap<RouteConfig, CompiledTemplate>();
function keyOf(route: RouteConfig & { digest: DigestConfig }, context: Record<string, unknown>): string {
  if (route.digest.key === undefined) return '';
  let t = keyTemplates.get(route);
  if (!t) {
    t = compileTemplate(route.digest.key, 'text');
    keyTemplates.set(route, t);
  }
  return t(context);
}

/** True for a route that gathers its notifications into digests. */
export function isDigestRoute(route: RouteConfig): route is RouteConfig & { digest: DigestConfig } {
  return route.digest !== undefined;
}

/**
 * The item a message adds to a digest: what the digest's template shows of
 * it. One larger than `maxItemBytes` keeps its identity and leaves its data
 * out (`truncated: true`): a digest never drops a member for its size.
 */
export function digestItem(data: DecideJobData, context: Record<string, unknown>, due: number | undefined, maxItemBytes: number): string {
  const base = { messageKey: data.messageKey, at: data.firstArrivalAt, ...(due !== undefined ? { dueAt: due } : {}) };
  const full = JSON.stringify({ ...base, ...context });
  if (Buffer.byteLength(full) <= maxItemBytes) return full;
  const { source, type, id } = context as { source?: unknown; type?: unknown; id?: unknown };
  return JSON.stringify({ ...base, source, type, id, truncated: true });
}

/** Pure: the digest memberships of a message, one per matching digest route and recipient. */
export function planDigestJoins(data: DecideJobData, routes: RouteConfig[], mailboxes: Pick<MailboxConfig, 'id' | 'owner'>[]): DigestJoinPlan[] {
  const { input } = data;
  const digestRoutes = routes.filter(isDigestRoute).filter((route) => routeMatches(route.match, input));
  if (digestRoutes.length === 0) return [];
  const owner = input.kind === 'mail' ? mailboxes.find((m) => m.id === input.mailboxId)?.owner : undefined;
  const context = templateContext(input, owner);
  const plans = new Map<string, DigestJoinPlan>();
  for (const route of digestRoutes) {
    const due = dueAt(route, input, data.firstArrivalAt);
    for (const raw of recipientsOf(route, input, owner)) {
      const recipient = normalizeRecipient(raw);
      if (!recipient) continue;
      const key = keyOf(route, { ...context, recipient });
      // One tenant's messages never share another's digest, even to one recipient.
      const group = tenantKey(input.tenant, digestGroupId(route.name, recipient, key));
      if (plans.has(group)) continue;
      plans.set(group, { route, recipient, key, group, item: digestItem(data, context, due, route.digest.maxItemBytes) });
    }
  }
  return [...plans.values()];
}
