import type { DecideJobData, IngestInput } from '@singleshot/core';
import { redisRefusals, type KeyBuilder, type MessageStore, type ReplicaWaits } from '@singleshot/store';
import { DECIDE_BATCH_MAX, TurnCoalescer, enqueueDecideJobs, type Queues } from '@singleshot/queues';
import { tracingOn, withSpan } from '@singleshot/tracing';
import { acceptanceKeys } from './acceptance-keys';
import { Deadlines } from './deadlines';
import { StoreUnavailableError } from './errors';

export interface AcceptDeps {
  /** Message records on the fail-fast producer connection. */
  messages: Pick<MessageStore, 'arrive' | 'markQueued'>;
  /**
   * Decide queues; a message's job goes to its message key's partition. The
   * first arrivals of one event-loop turn share `batch` decide jobs
   * (libs/queues batch-jobs.ts); a message alone gets its own job.
   */
  decideQueues: Pick<Queues, 'decideOf'>;
  /** Names the keys an acceptance writes (the replica wait's, `acceptanceKeys`). */
  keys: KeyBuilder;
  /**
   * The producer connection's replica waits on a Redis Cluster: an arrival is
   * answered only once the acceptance's writes (the message record and its
   * decide queue partition) are on a replica, and fails (ingest answers 503)
   * when they may be lost. Absent on a single Redis: no wait, no key list.
   */
  replicas?: ReplicaWaits | undefined;
  enqueueTimeoutMs: number;
  /** Counts each answered arrival by its tenant (a duplicate is never charged as a message). */
  tenants?: { arrived(tenant: string | undefined, result: AcceptResult['status']): void } | undefined;
}

export interface AcceptResult {
  messageKey: string;
  status: 'accepted' | 'duplicate';
}

/**
 * One arrival. `traceparent`: the producer's W3C trace context (a request
 * header), the parent of the acceptance's span when tracing is on; `trace`:
 * that span's, which the decide job carries on (set here, not by callers).
 */
type Message = { messageKey: string; via: string; input: IngestInput; traceparent?: string | undefined; trace?: string | undefined };

/** The keys an acceptance writes and their masters before the first write, for its replica wait. */
type Written = { keys: string[]; ownersBefore: string };

/** One arrival in flight: the enqueue it runs or waits for, forgotten if the arrival times out. */
type Arrival = { joined: Promise<boolean> | undefined };

/**
 * Takes arrivals of messages (one per ingest process). `accept` resolves only
 * once the message's decide job is in Redis (docs/protocol.md invariant 2: ack
 * after effect); it throws StoreUnavailableError when Redis did not confirm
 * within `enqueueTimeoutMs`. `accepted` goes to exactly one arrival, `duplicate`
 * to all others.
 */
export class Acceptor {
  private readonly deadlines: Deadlines;
  /**
   * Enqueues under way in this process, by message key. Parallel first
   * arrivals of one message (a producer's retries, at-least-once senders) wait
   * for the one already enqueueing instead of repeating its BullMQ add and
   * markQueued: once that succeeded the job is in Redis and `queuedAt` is set,
   * so the add would be a no-op and the mark would lose. If it failed, they
   * enqueue themselves.
   */
  private readonly enqueuing = new Map<string, Promise<boolean>>();
  /** The decide jobs of the first arrivals taken in one event-loop turn, added together. */
  private readonly decides: TurnCoalescer<DecideJobData>;

  constructor(private readonly deps: AcceptDeps) {
    this.deadlines = new Deadlines(deps.enqueueTimeoutMs);
    this.decides = new TurnCoalescer((messages) => enqueueDecideJobs(deps.decideQueues, messages), DECIDE_BATCH_MAX);
  }

  /** One arrival of a message; see the class. Traced as `ingest.accept` when tracing is on. */
  accept(message: Message): Promise<AcceptResult> {
    if (!tracingOn()) return this.acceptNow(message);
    return withSpan('ingest.accept', { parent: message.traceparent, kind: 'server', attributes: { 'singleshot.message_key': message.messageKey, 'singleshot.via': message.via } }, async (span) => {
      const result = await this.acceptNow(span ? { ...message, trace: span.traceparent } : message);
      span?.setAttributes({ 'singleshot.result': result.status });
      return result;
    });
  }

  private acceptNow(message: Message): Promise<AcceptResult> {
    // While Redis refuses writes (OOM, MISCONF, READONLY...), an arrival is
    // answered 503 without trying: a producer's retries must not become refused
    // commands at its rate. The first arrival after the wait tries again.
    if (redisRefusals.inBackoff()) return Promise.reject(new StoreUnavailableError(`Redis refuses writes (${redisRefusals.refusing() ?? 'refusing'}); retry later`));
    return new Promise<AcceptResult>((resolve, reject) => {
      const arrival: Arrival = { joined: undefined };
      const expire = () => {
        // This arrival waited its whole deadline on the enqueue it ran or
        // joined (a command sent to a master that died, not yet failed by the
        // client): later arrivals, the producer's retry after this 503 among
        // them, must not wait behind it, so it is forgotten here and the next
        // arrival enqueues itself; the add is idempotent.
        if (arrival.joined) this.forget(message.messageKey, arrival.joined);
        reject(new StoreUnavailableError(`Redis did not confirm within ${this.deps.enqueueTimeoutMs} ms`));
      };
      this.deadlines.start(expire);
      this.arrive(message, arrival).then(
        (result) => {
          this.deadlines.cancel(expire);
          redisRefusals.succeeded();
          this.deps.tenants?.arrived(message.input.tenant, result.status);
          resolve(result);
        },
        (err: unknown) => {
          this.deadlines.cancel(expire);
          redisRefusals.noteError(err);
          reject(classify(err));
        },
      );
    });
  }

  private async arrive({ messageKey, via, input, trace }: Message, arrival: Arrival): Promise<AcceptResult> {
    const { messages, replicas } = this.deps;
    // Before the first write: a failover that moves these slots before the replica wait fails the wait.
    let written: Written | undefined;
    if (replicas) {
      const keys = acceptanceKeys(this.deps.keys, messageKey);
      written = { keys, ownersBefore: replicas.owners(keys) };
    }
    const recorded = await messages.arrive(messageKey, via, input.tenant);
    if (!recorded.queued) {
      const running = this.enqueuing.get(messageKey);
      arrival.joined = running;
      if (!running || !(await running.then(() => true, () => false))) {
        return { messageKey, status: (await this.enqueue({ messageKey, via, input, trace }, recorded.firstArrivalAt, arrival, written)) ? 'accepted' : 'duplicate' };
      }
    }
    // Another arrival was accepted, perhaps an instant ago and not yet on a
    // replica: this answer is an acknowledgement too, so it waits as well.
    if (written) await this.onReplica(written);
    return { messageKey, status: 'duplicate' };
  }

  /** Adds the decide job and marks it queued; true for the arrival that answers `accepted`. */
  private enqueue(message: Message, firstArrivalAt: number, arrival: Arrival, written: Written | undefined): Promise<boolean> {
    const { messageKey } = message;
    const done = this.enqueueOnce(message, firstArrivalAt, written);
    this.enqueuing.set(messageKey, done);
    arrival.joined = done;
    // Forgotten a turn later, not at once: an arrival whose record was read
    // before markQueued (its reply came first on the same connection) may still
    // be on its way to the `enqueuing` lookup, and must find this enqueue there
    // rather than add a second decide job.
    const settled = () => setImmediate(() => this.forget(messageKey, done));
    done.then(settled, settled);
    return done;
  }

  /** Drops `enqueue` from the enqueues under way, unless a newer one replaced it. */
  private forget(messageKey: string, enqueue: Promise<boolean>): void {
    if (this.enqueuing.get(messageKey) === enqueue) this.enqueuing.delete(messageKey);
  }

  private async enqueueOnce({ messageKey, via, input, trace }: Message, firstArrivalAt: number, written: Written | undefined): Promise<boolean> {
    // Arrivals of other messages taken in this turn share the add
    // (TurnCoalescer). First arrivals of this message in several processes may
    // race here: markQueued picks one "accepted". Their adds collapse when both
    // use the message key as job id; when either went into a batch they do not,
    // and the message is decided twice, which the decision record and the
    // claim make harmless (docs/architecture.md, "Batch decide jobs").
    // `trace` is undefined unless tracing is on; JSON leaves it out of the job then.
    await this.decides.add([{ messageKey, firstArrivalAt, via, input, trace }]);
    const mine = await this.deps.messages.markQueued(messageKey);
    // Before any 2xx: a master failover must not lose an acknowledged message.
    if (written) await this.onReplica(written);
    return mine;
  }

  /**
   * Resolves once the acceptance's writes are on a replica (with replica
   * waits); rejects when a failover may lose them, and no 2xx goes out.
   */
  private async onReplica(written: Written): Promise<void> {
    await this.deps.replicas?.after(written.keys, written.ownersBefore);
  }
}

/**
 * Redis trouble is StoreUnavailableError; a JavaScript error of our own (a
 * RangeError from serializing a hostile body, a TypeError) is not an outage:
 * reporting it as one made producers retry a bad input forever. It goes on as
 * it is (500, logged).
 */
function classify(err: unknown): unknown {
  if (err instanceof StoreUnavailableError) return err;
  if (err instanceof RangeError || err instanceof TypeError || err instanceof SyntaxError || err instanceof ReferenceError) return err;
  return new StoreUnavailableError('Redis is unavailable', { cause: err });
}
