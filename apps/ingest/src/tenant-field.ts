import { DEFAULT_TENANT } from '@singleshot/core';

/**
 * The `tenant` of a message's input: absent for the default tenant, so a
 * deployment without tenants sends the decide jobs it always did.
 */
export function tenantField(tenant: string | undefined): { tenant?: string } {
  return tenant === undefined || tenant === DEFAULT_TENANT ? NONE : { tenant };
}

// One shared empty object: the default tenant's events allocate nothing for it.
const NONE: { tenant?: string } = Object.freeze({});
