import type { Config } from './schema';

/**
 * The tenants a config names (docs/tenants.md): of its producer keys, then its
 * mailboxes, then its sources, each once, in that order.
 */
export function tenantsOf(config: Pick<Config, 'ingest' | 'mailboxes' | 'sources'>): string[] {
  const named = [...config.ingest.apiKeys, ...config.mailboxes, ...config.sources].map((c) => c.tenant);
  return [...new Set(named.filter((t): t is string => t !== undefined))];
}
