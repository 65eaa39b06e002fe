import type { ParsedMail } from '@singleshot/mail';
import type { AcceptResult } from '@singleshot/intake';
import { tenantField, tenantKey } from '@singleshot/core';
import type { IngestContext } from './context';

/**
 * The one way every mail path (raw MIME, provider webhooks, IMAP) hands a
 * parsed mail over: counted, keyed by the same rules, and resolved only once
 * its decide job is in Redis (throws StoreUnavailableError otherwise).
 * `tenant`: the posting key's (core tenant.ts); the mail is that tenant's.
 */
export async function acceptMail(ctx: IngestContext, parsed: ParsedMail, via: string, tenant?: string): Promise<AcceptResult> {
  if (parsed.identityFallbackReason) ctx.metrics.fingerprintFallbacks.inc({ source: via });
  const result = await ctx.accept.accept({ messageKey: tenantKey(tenant, parsed.messageKey), via, input: { ...parsed.input, ...tenantField(tenant) } });
  ctx.counters.received('mail', result.status);
  if (result.status === 'duplicate') ctx.counters.duplicateAtIngest();
  return result;
}
