import type { ApiKeyConfig } from '@singleshot/config';
import { findSecret, secretDigest } from '@singleshot/http';
import type { Principal } from './auth';

/**
 * The producer keys bound to a tenant (`ingest.apiKeys[].tenant`), which the
 * admin API also takes as `Authorization: Bearer <key>`: their principal sees
 * and acts on its tenant's messages and operations only (docs/tenants.md).
 * A key without a tenant is a producer's, not an operator's: it is not taken.
 */
export class TenantKeys {
  private readonly digests: Buffer[];
  private readonly principals: Principal[];

  constructor(apiKeys: readonly ApiKeyConfig[]) {
    const bound = apiKeys.filter((k): k is ApiKeyConfig & { tenant: string } => k.tenant !== undefined && k.key !== undefined);
    this.digests = bound.map((k) => secretDigest(k.key ?? ''));
    this.principals = bound.map((k) => ({ who: `key:${k.name}`, scheme: 'bearer', tenant: k.tenant }));
  }

  /** The tenant principal of an `Authorization` header, or undefined (every key compared, in constant time each). */
  principalOf(header: string | undefined): Principal | undefined {
    if (this.digests.length === 0) return undefined;
    const bearer = /^bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];
    return bearer === undefined ? undefined : this.principals[findSecret(bearer, this.digests)];
  }
}
