import type { IngestInput } from '@singleshot/core';
import type { MessageStore } from '@singleshot/store';
import { enqueueDecide, type Queues } from '@singleshot/queues';
import { StoreUnavailableError } from './errors';

export interface AcceptDeps {
  /** Message records on the fail-fast producer connection. */
  messages: Pick<MessageStore, 'arrive' | 'markQueued'>;
  /** Decide queues; a message's job goes to its message key's partition. */
  decideQueues: Pick<Queues, 'decideOf'>;
  /**
   * Resolves once the acceptance's writes are on enough replicas (a cluster's
   * `WAIT`, a no-op on a single Redis); rejects otherwise, and ingest answers 503.
   */
  replicate(messageKey: string): Promise<void>;
  enqueueTimeoutMs: number;
}

export interface AcceptResult {
  messageKey: string;
  status: 'accepted' | 'duplicate';
}

/**
 * Takes one arrival of a message. Resolves only once the message's decide job
 * is in Redis (docs/protocol.md invariant 2: ack after effect); throws StoreUnavailableError
 * when Redis did not confirm. `accepted` goes to exactly one arrival, `duplicate` to all others.
 */
export async function acceptMessage(
  deps: AcceptDeps,
  input: { messageKey: string; via: string; input: IngestInput },
): Promise<AcceptResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new StoreUnavailableError(`Redis did not confirm within ${deps.enqueueTimeoutMs} ms`)),
      deps.enqueueTimeoutMs,
    );
  });
  try {
    return await Promise.race([timeout, accept(deps, input)]);
  } catch (err) {
    if (err instanceof StoreUnavailableError) throw err;
    // A JavaScript error of our own (a RangeError from serializing a hostile
    // body, a TypeError) is not an outage: reporting it as one made producers
    // retry a bad input forever. It goes on as it is (500, logged).
    if (err instanceof RangeError || err instanceof TypeError || err instanceof SyntaxError || err instanceof ReferenceError) throw err;
    throw new StoreUnavailableError('Redis is unavailable', { cause: err });
  } finally {
    clearTimeout(timer);
  }
}

async function accept(deps: AcceptDeps, { messageKey, via, input }: { messageKey: string; via: string; input: IngestInput }): Promise<AcceptResult> {
  const arrival = await deps.messages.arrive(messageKey, via);
  if (arrival.queued) {
    // Another arrival was accepted, perhaps an instant ago and not yet on a
    // replica: this answer is an acknowledgement too, so it waits as well.
    await deps.replicate(messageKey);
    return { messageKey, status: 'duplicate' };
  }
  // Several first-time arrivals may race here; the job id (message key) makes
  // their adds collapse into one job, and markQueued picks one "accepted".
  await enqueueDecide(deps.decideQueues, { messageKey, firstArrivalAt: arrival.firstArrivalAt, via, input });
  const mine = await deps.messages.markQueued(messageKey);
  // Before any 2xx: a master failover must not lose an acknowledged message.
  await deps.replicate(messageKey);
  return { messageKey, status: mine ? 'accepted' : 'duplicate' };
}
