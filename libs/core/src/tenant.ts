import { sha256Hex } from './hash';

/**
 * Tenants (docs/tenants.md): the customers one deployment sends for. A
 * producer key bound to a tenant posts, reads and cancels that tenant's
 * messages only; everything else belongs to the default tenant.
 */

/** The tenant of every message posted without one: a deployment without tenants is this one tenant. */
export const DEFAULT_TENANT = 'default';

/** A tenant id: lower-case letters, digits, `_` and `-`, at most 64; never a `/` or `:`, which `tenantKey` relies on. */
export const TENANT_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/**
 * An identity key of `tenant`: the default tenant's key as it is (a deployment
 * without tenants keeps its keys), another tenant's hashed once more after its
 * name. Two tenants never share a key: the input hashed, `<tenant>/<hex>`, is
 * no default key's input (those hold a `:`, or start `digest` and a newline)
 * and two tenants' inputs differ in their names.
 */
export function tenantKey(tenant: string | undefined, key: string): string {
  return tenant === undefined || tenant === DEFAULT_TENANT ? key : sha256Hex(`${tenant}/${key}`);
}


/**
 * The `tenant` field of a message's input: absent for the default tenant, so
 * a deployment without tenants sends the decide jobs it always did.
 */
export function tenantField(tenant: string | undefined): { tenant?: string } {
  return tenant === undefined || tenant === DEFAULT_TENANT ? NONE : { tenant };
}

// One shared empty object: the default tenant's events allocate nothing for it.
const NONE: { tenant?: string } = Object.freeze({});
