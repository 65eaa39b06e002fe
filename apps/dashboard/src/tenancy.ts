import type { NextFunction, Request, Response } from 'express';
import { sendError } from '@singleshot/http';
import { principalOf } from './auth';
import type { AdminApiDeps } from './deps';

/**
 * What a tenant's principal may see (docs/tenants.md): the messages its
 * tenant's keys posted, and the operations, stories and dead records of
 * those. Another tenant's record answers exactly as a missing one does, so a
 * key learns nothing of what it may not see.
 */

/**
 * How many records of a shared list (the DLQ, the scheduled operations) a
 * tenant's view reads through, at most: the tenant's own among them are its
 * view, and their number its total (the whole list's would tell it of other
 * tenants' work).
 */
export const TENANT_SCAN_MAX = 10_000;

/** True when `tenant` (undefined: an operator, who sees all) may see the message `messageKey`. */
export async function maySeeMessage(deps: Pick<AdminApiDeps, 'messages'>, tenant: string | undefined, messageKey: string | undefined): Promise<boolean> {
  if (tenant === undefined) return true;
  return messageKey !== undefined && (await deps.messages.tenantOf(messageKey)) === tenant;
}

/** True when `tenant` may see the operation `operationKey`: one of its messages' (read from the operation's record). */
export async function maySeeOperation(deps: Pick<AdminApiDeps, 'messages' | 'operations'>, tenant: string | undefined, operationKey: string): Promise<boolean> {
  if (tenant === undefined) return true;
  return maySeeMessage(deps, tenant, (await deps.operations.get(operationKey))?.messageKey);
}

/**
 * Express middleware in front of what every tenant shares (Bull Board, the
 * digests page): a tenant's principal gets 403 `TENANT_NOT_ALLOWED`.
 */
export function operatorOnly(req: Request, res: Response, next: NextFunction): void {
  const { tenant, who } = principalOf(res);
  if (tenant === undefined) return next();
  refuseTenant(res, who, tenant, `${req.baseUrl || req.path}`);
}

/** The 403 of a tenant's principal on what every tenant shares. */
export function refuseTenant(res: Response, who: string, tenant: string, what: string): void {
  sendError(res, 403, 'TENANT_NOT_ALLOWED', `${who} is bound to tenant "${tenant}": ${what} is shared by every tenant, and only an operator may use it`);
}
