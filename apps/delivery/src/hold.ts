import { quietUntil, type DeliverJobData, type ErrorCode, type Verdict } from '@singleshot/core';
import type { WaitInput } from '@singleshot/store';
import { passBreakers, type ReservedTrial } from './breaker-gate';
import type { DeliverDeps } from './deliver-types';
import { checkDocuments, type DocumentGate } from './document-gate';

/**
 * What the claim needs to know besides the operation's state, worked out
 * before it: why the operation may not go now although nothing ended it (its
 * quiet hours, a document not stored yet, every provider behind an open
 * breaker). None of these is decided here: the hold is passed into the claim,
 * which answers the one verdict (docs/protocol.md, invariant 3): an operation
 * that ended (cancelled, suppressed, sent) ends there even inside its quiet
 * hours, and one that is held is marked waiting in place of the lock. Waiting
 * is never an attempt: a claim that took the lock would count one, and an
 * outage or a slow document would use up attempts with no provider called.
 */
export interface Hold {
  /** Why it waits; absent when it may go. */
  hold?: WaitInput;
  /** The documents' gate: `ready` (send with them) or `failed` (ends dead), or `waiting` (the hold). */
  documents?: DocumentGate;
  /** A half-open breaker's one trial, taken for this attempt (only when it may go). */
  trial?: ReservedTrial;
}

/**
 * Quiet hours first (no read at all), then the documents (one round trip),
 * then the breakers (in memory), each only when the one before lets it go: a
 * waiting operation never holds a half-open trial.
 */
export async function holdOf(job: DeliverJobData, deps: DeliverDeps): Promise<Hold> {
  const now = deps.now ?? Date.now;
  if (job.quietHours) {
    const until = quietUntil(job.quietHours, now());
    if (until !== undefined) return { hold: { reason: 'quiet_hours', untilMs: until } };
  }
  let documents: DocumentGate | undefined;
  if (job.documents && job.documents.length > 0) {
    if (!deps.documents) {
      documents = { kind: 'failed', error: { code: 'NO_DOCUMENT_STORE' satisfies ErrorCode, message: 'this delivery process has no document store wired' } };
    } else {
      documents = await checkDocuments({ ...job, documents: job.documents }, deps.documents);
      if (documents.kind === 'waiting') {
        // The render wakes the job once the document is stored; the poll is the fallback.
        const poll = deps.documents.waitPollMs;
        const delayMs = poll + Math.floor((deps.random ?? Math.random)() * Math.min(250, poll));
        return { documents, hold: { reason: 'document', untilMs: now() + delayMs, waitingFor: documents.waitingFor, waitingKey: documents.documentKey } };
      }
    }
  }
  const gate = passBreakers(job.channel, deps);
  if (gate.kind === 'wait') {
    return { ...(documents ? { documents } : {}), hold: { reason: 'breaker_open', untilMs: now() + gate.delayMs + Math.floor((deps.random ?? Math.random)() * 250) } };
  }
  return { ...(documents ? { documents } : {}), ...(gate.trial ? { trial: gate.trial } : {}) };
}

/**
 * Makes a wait the claim marked visible beyond the operation's state: in this
 * process's gauge (quiet hours, breakers; document waits are counted from
 * Redis), and once per document wait in the log.
 */
export function noteWait(job: DeliverJobData, verdict: Extract<Verdict, { kind: 'wait' }>, held: Hold, deps: Pick<DeliverDeps, 'waiting' | 'logger'>): void {
  if (verdict.reason === 'scheduled') return;
  if (verdict.reason !== 'document') {
    deps.waiting?.note(job.operationKey, verdict.reason, verdict.untilMs);
    return;
  }
  if (verdict.began && held.documents?.kind === 'waiting') {
    const { waitingFor, status } = held.documents;
    deps.logger.info({ event: 'operation_waiting', operationKey: job.operationKey, messageKey: job.messageKey, waitingFor, documentStatus: status }, 'operation waits for its document');
  }
}
