import type { ParsedMail } from '@singleshot/mail';
import { acceptMessage, type AcceptResult } from './accept';
import type { IngestContext } from './context';

/**
 * The one way every mail path (raw MIME, provider webhooks, IMAP) hands a
 * parsed mail over: counted, keyed by the same rules, and resolved only once
 * its decide job is in Redis (throws StoreUnavailableError otherwise).
 */
export async function acceptMail(ctx: IngestContext, parsed: ParsedMail, via: string): Promise<AcceptResult> {
  if (parsed.identityFallbackReason) ctx.metrics.fingerprintFallbacks.inc({ source: via });
  const result = await acceptMessage(ctx.accept, { messageKey: parsed.messageKey, via, input: parsed.input });
  ctx.metrics.eventsReceived.inc({ source: 'mail', result: result.status });
  if (result.status === 'duplicate') ctx.metrics.duplicatesSuppressed.inc({ stage: 'ingest', reason: 'seen_before' });
  return result;
}
