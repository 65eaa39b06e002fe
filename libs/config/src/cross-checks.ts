import type { ConfigIssue } from './config-error';
import { formatPath } from './config-error';
import { durationMs } from './primitives';
import { isRawObject, type RawObject } from './raw';

/**
 * Rules that span sections. They run on the raw input, defensively, so they
 * are reported together with the schema's problems instead of only after the
 * schema passes (one restart should show every mistake).
 */
export function crossCheck(raw: RawObject): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const providers = isRawObject(raw.providers) ? raw.providers : {};
  const routes = Array.isArray(raw.routes) ? raw.routes : [];
  const mailboxes = Array.isArray(raw.mailboxes) ? raw.mailboxes : [];

  // delivery.partitions must name partitions that exist (redis.partitions, or
  // redis.shards on a cluster, 1 on a single Redis).
  const redis = isRawObject(raw.redis) ? raw.redis : {};
  const delivery = isRawObject(raw.delivery) ? raw.delivery : {};
  const partitionCount =
    typeof redis.partitions === 'number' ? redis.partitions : isRawObject(redis.cluster) ? (typeof redis.shards === 'number' ? redis.shards : 16) : 1;
  if (Array.isArray(delivery.partitions)) {
    delivery.partitions.forEach((p, index) => {
      if (typeof p === 'number' && p >= partitionCount) {
        issues.push({ path: formatPath(['delivery', 'partitions', index]), message: `partition ${p} does not exist: there are ${partitionCount} (0..${partitionCount - 1})` });
      }
    });
  }

  const mailboxIds = new Set<string>();
  mailboxes.forEach((mailbox, index) => {
    if (!isRawObject(mailbox) || typeof mailbox.id !== 'string') return;
    if (mailboxIds.has(mailbox.id)) {
      issues.push({ path: formatPath(['mailboxes', index, 'id']), message: `duplicate mailbox id "${mailbox.id}"` });
    }
    mailboxIds.add(mailbox.id);
  });

  const routeNames = new Set<string>();
  const scheduling = isRawObject(raw.scheduling) ? raw.scheduling : {};
  const horizonDays = typeof scheduling.maxHorizonDays === 'number' ? scheduling.maxHorizonDays : 30;
  routes.forEach((route, index) => {
    if (!isRawObject(route)) return;
    const delay = durationMs.safeParse(route.delay);
    if (delay.success && delay.data > horizonDays * 86_400_000) {
      issues.push({ path: formatPath(['routes', index, 'delay']), message: `delay ${String(route.delay)} is past scheduling.maxHorizonDays (${horizonDays} days)` });
    }
    if (typeof route.name === 'string') {
      if (routeNames.has(route.name)) {
        issues.push({ path: formatPath(['routes', index, 'name']), message: `duplicate route name "${route.name}"` });
      }
      routeNames.add(route.name);
    }
    if (typeof route.channel === 'string' && !Object.hasOwn(providers, route.channel)) {
      const known = Object.keys(providers);
      issues.push({
        path: formatPath(['routes', index, 'channel']),
        message: `unknown channel "${route.channel}": add providers.${route.channel} (configured: ${known.length ? known.join(', ') : 'none'})`,
      });
    }
    const match = route.match;
    if (isRawObject(match) && typeof match.mailbox === 'string' && !mailboxIds.has(match.mailbox)) {
      issues.push({
        path: formatPath(['routes', index, 'match', 'mailbox']),
        message: `unknown mailbox "${match.mailbox}": no mailboxes entry has this id`,
      });
    }
  });

  for (const [channel, list] of Object.entries(providers)) {
    if (!Array.isArray(list)) continue;
    const names = new Set<string>();
    list.forEach((provider, index) => {
      if (!isRawObject(provider) || typeof provider.name !== 'string') return;
      if (names.has(provider.name)) {
        issues.push({
          path: formatPath(['providers', channel, index, 'name']),
          message: `duplicate provider name "${provider.name}" in channel "${channel}"`,
        });
      }
      names.add(provider.name);
    });
  }
  return issues;
}
