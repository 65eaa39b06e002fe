import { SingleshotError, eventMessageKey, sha256Hex, tenantField, tenantKey } from '@singleshot/core';
import type { AcceptResult } from '@singleshot/intake';
import type { Logger } from '@singleshot/observability';
import type { DeadJobData } from '@singleshot/queues';
import type { Derived } from './derive';
import type { RelayMetrics } from './metrics';

/** How a message ended at acceptance; only then may its source acknowledge it to its origin. */
export type Outcome = 'accepted' | 'duplicate' | 'invalid';

/** The relay stopped while a message waited for acceptance: the source must not acknowledge it. */
export class HandOffAbortedError extends SingleshotError {
  constructor() {
    super('the relay is stopping; the message stays unacknowledged at its origin', 'HANDOFF_ABORTED');
  }
}

/** Where a message came from, kept in its dead record. `key` identifies it across redeliveries. */
export interface Origin {
  /** The same for every redelivery of one message (a stream entry id, an outbox row, a hash of the body). */
  key: string;
  /** Shown in the dead record (`singleshot dlq show`). */
  details: Record<string, string | number>;
  /** The body as text (cut to a few KB in the record). */
  body: string;
}

export interface HandOffDeps {
  /** The acceptance ingest uses (libs/intake Acceptor). */
  accept(message: { messageKey: string; via: string; input: { kind: 'event'; tenant?: string; source: string; eventId: string; type: string; recipients?: string[]; data: Record<string, unknown> } }): Promise<AcceptResult>;
  /** Each source's tenant (its config's `tenant`), by source name; a source not here is the default tenant's. */
  tenants?: ReadonlyMap<string, string>;
  /** Writes a DLQ record (queue `dead`). */
  addDead(record: DeadJobData): Promise<void>;
  metrics: RelayMetrics;
  logger: Logger;
  /** Waits between failed acceptance attempts (doubling from `minMs` up to `maxMs`). */
  backoff?: { minMs: number; maxMs: number };
}

const BODY_EXCERPT = 4096;

/**
 * The one path from a source's message to acceptance (every source calls it).
 * It resolves only once the message is accepted, a duplicate of an accepted
 * one, or recorded dead as poison; while Redis cannot confirm it tries again
 * (each failure counted `retry`), so a source acknowledges only what was
 * accepted. It rejects with HandOffAbortedError when `signal` aborts first.
 */
export class HandOff {
  private readonly minMs: number;
  private readonly maxMs: number;

  constructor(private readonly deps: HandOffDeps) {
    this.minMs = deps.backoff?.minMs ?? 100;
    this.maxMs = deps.backoff?.maxMs ?? 5_000;
  }

  /** See the class. `onWait` runs before each wait between attempts (a NATS in-progress ack). */
  async handle(name: string, derived: Derived, origin: Origin, options: { signal: AbortSignal; onWait?: () => void }): Promise<Outcome> {
    const { metrics, logger } = this.deps;
    for (let attempt = 0; ; attempt++) {
      if (options.signal.aborted) throw new HandOffAbortedError();
      try {
        const outcome = derived.ok ? await this.acceptEvent(name, derived.event) : await this.recordDead(name, derived.problem, origin);
        metrics.messages.inc({ source: name, result: outcome });
        return outcome;
      } catch (err) {
        metrics.messages.inc({ source: name, result: 'retry' });
        if (attempt === 0 || attempt % 20 === 0) {
          logger.warn({ event: 'source_retry', source: name, attempt, err: errorFields(err) }, 'not accepted yet; trying again');
        }
      }
      options.onWait?.();
      await sleep(Math.min(this.maxMs, this.minMs * 2 ** Math.min(attempt, 16)), options.signal);
    }
  }

  private async acceptEvent(name: string, event: Extract<Derived, { ok: true }>['event']): Promise<Outcome> {
    const tenant = this.deps.tenants?.get(name);
    const result = await this.deps.accept({
      messageKey: tenantKey(tenant, eventMessageKey(event.source, event.id)),
      via: `source:${name}`,
      input: {
        kind: 'event',
        ...tenantField(tenant),
        source: event.source,
        eventId: event.id,
        type: event.type,
        ...(event.recipients ? { recipients: event.recipients } : {}),
        data: event.data,
      },
    });
    return result.status;
  }

  private async recordDead(name: string, problem: string, origin: Origin): Promise<Outcome> {
    // Keyed by the origin's identity: a poison message redelivered before its
    // rejection reached the broker re-adds the same record (a no-op).
    const operationKey = sha256Hex(`source:${name}:${origin.key}`);
    await this.deps.addDead({
      operationKey,
      job: { source: name, origin: origin.details, body: origin.body.slice(0, BODY_EXCERPT) },
      reason: 'invalid_event',
      error: { code: 'INVALID_EVENT', message: problem },
      attempts: [],
      diedAt: Date.now(),
    });
    this.deps.logger.warn({ event: 'source_invalid_event', source: name, operationKey, origin: origin.details, problem }, 'a message that can never be an event: recorded dead');
    return 'invalid';
  }
}

function errorFields(err: unknown): { code?: string; message: string } {
  if (err instanceof SingleshotError) return { code: err.code, message: err.message };
  return { message: err instanceof Error ? err.message : String(err) };
}

/** Resolves after `ms`, or at once when `signal` aborts (the caller checks it). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
