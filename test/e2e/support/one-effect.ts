import type { AttemptRecord, OperationRecord } from '@singleshot/store';
import type { SinkAcceptance, SinkRequest } from '@singleshot/test-harness';

/** What the provider (the test's HTTP sink) and the operation's state say about one operation key. */
export interface EffectEvidence {
  key: string;
  record: OperationRecord | null | undefined;
  history: AttemptRecord[];
  /** Every POST the sink received under this key, in arrival order. */
  posts: SinkRequest[];
  accepted: SinkAcceptance | undefined;
  /** The sink's answers to lookups of this key. */
  lookups: Array<{ key: string; found: boolean }>;
}

/**
 * Why an operation that must be sent once did not reach the provider as one
 * effect (docs/protocol.md, invariants 5 and 6 and "What the guarantees rest
 * on"); empty when it did.
 *
 * The provider took it as one effect: the operation is `sent` with the id the
 * provider gave, and every POST under its key carried the same message.
 *
 * A second accepted POST under the same key is allowed only as an idempotent
 * provider absorbs it, and only where the protocol lets it happen: an attempt
 * ended in doubt after its request was written, and the next attempt's lookup
 * was answered "not found" before the provider got to that request (a provider
 * that reads a request late answers for it late). So each accepted POST after
 * the first needs a lookup answered "not found" (the sink answers so only
 * before its first acceptance), and every attempt that sent while an earlier
 * doubt stood must have reconciled first (`NOT_FOUND_ON_LOOKUP` in its own
 * history). A resend without a lookup, a POST of a holder that never recorded
 * it beyond what the lookups explain, or a lookup that found it followed by a
 * send, is a double send and listed here.
 */
export function oneEffectProblems(e: EffectEvidence): string[] {
  const problems: string[] = [];
  const tag = e.key.slice(0, 12);
  if (!e.accepted) return [`${tag}: never accepted by the provider`];
  if (e.record?.status !== 'sent' || e.record.externalId !== e.accepted.id) {
    problems.push(`${tag}: ${e.record?.status} with id ${e.record?.externalId}, the provider's is ${e.accepted.id}`);
  }
  const bodies = new Set(e.posts.map((p) => p.rawBody));
  if (bodies.size > 1) problems.push(`${tag}: ${bodies.size} different messages under one idempotency key`);
  const notFound = e.lookups.filter((l) => !l.found).length;
  if (e.accepted.count - 1 > notFound) {
    problems.push(`${tag}: accepted ${e.accepted.count} times after ${notFound} lookups answered "not found"`);
  }
  let doubt = false;
  const attempts = [...new Set(e.history.map((h) => h.attempt))].sort((a, b) => a - b);
  for (const attempt of attempts) {
    let reconciled = false;
    for (const h of e.history.filter((r) => r.attempt === attempt)) {
      if (h.step === 'reconcile' && h.errorCode === 'NOT_FOUND_ON_LOOKUP') {
        reconciled = true;
        doubt = false;
      }
      if (h.step === 'reconcile' && h.outcome === 'sent') doubt = false;
      if (h.step === 'send' && doubt && !reconciled) problems.push(`${tag}: attempt ${attempt} sent while an earlier attempt's doubt stood, without a lookup`);
      if (h.outcome === 'in_doubt') doubt = true;
      if (h.step === 'send' && h.outcome === 'sent' && e.history.some((r) => r.attempt > attempt && r.step === 'send')) {
        problems.push(`${tag}: attempt ${attempt} was sent, and a later attempt sent again`);
      }
    }
  }
  return problems;
}
