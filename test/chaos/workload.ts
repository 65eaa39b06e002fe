import { eventMessageKey, operationKey, parseAction } from '@singleshot/core';
import { prng } from './prng';

/** What the chaos route matches and does (see chaos-config.ts, which routes it). */
export const CHAOS_SOURCE = 'chaos';
export const CHAOS_TYPE = 'order.created';
export const CHAOS_ACTION = 'notify';
export const CHAOS_CHANNEL = 'webhook';

/** The provider refuses these recipients for good (422): exactly their operations must end dead. */
export const isRejectedRecipient = (recipient: string): boolean => recipient.startsWith('reject-');

export interface ChaosEvent {
  index: number;
  /** The producer's stable event id (the same on every send). */
  id: string;
  recipients: string[];
}

/** One send of an event by the producer (which retries it until a 2xx). */
export interface PlannedSend {
  event: number;
  /** Ms after the run's start. */
  atMs: number;
  /** Sent apart from the event's first burst. */
  late: boolean;
}

export interface Workload {
  events: ChaosEvent[];
  /** Every send, by time. */
  sends: PlannedSend[];
  /** When the last send is due (ms after the start). */
  spanMs: number;
}

export interface WorkloadOptions {
  seed: string;
  events: number;
  /** New events per second. */
  ratePerSecond: number;
  /** Latest a later send may come after its event's first burst. */
  lateMs: number;
  /** Share of events that also name a recipient the provider rejects. */
  rejectRatio: number;
}

/**
 * The producer's side of a chaos run, all from the seed: N events, each sent
 * 3–5 times — a first burst of 1–3 parallel sends, the others shortly after or
 * up to `lateMs` later — with 1–3 recipients, some of them rejected by the
 * provider. Payloads are identical across sends, as an at-least-once producer's are.
 */
export function planWorkload(options: WorkloadOptions): Workload {
  const rng = prng(options.seed, 'workload');
  const events: ChaosEvent[] = [];
  const sends: PlannedSend[] = [];
  const gapMs = 1000 / options.ratePerSecond;
  for (let index = 0; index < options.events; index++) {
    const id = `evt-${options.seed}-${index}`;
    const recipients = Array.from({ length: rng.chance(0.7) ? 1 : rng.int(2, 3) }, (_, j) => `u${index}-${j}@chaos.test`);
    if (rng.chance(options.rejectRatio)) recipients.splice(rng.int(0, recipients.length), 0, `reject-${index}@chaos.test`);
    events.push({ index, id, recipients });

    const firstAt = Math.round(index * gapMs + rng.between(0, gapMs));
    const total = rng.int(3, 5);
    const burst = rng.int(1, Math.min(3, total - 1));
    for (let s = 0; s < total; s++) {
      if (s < burst) {
        sends.push({ event: index, atMs: firstAt, late: false });
        continue;
      }
      const delay = rng.chance(0.5) ? rng.between(0, 1500) : rng.between(1500, Math.max(1500, options.lateMs));
      sends.push({ event: index, atMs: Math.round(firstAt + delay), late: true });
    }
  }
  sends.sort((a, b) => a.atMs - b.atMs || a.event - b.event);
  return { events, sends, spanMs: sends.at(-1)?.atMs ?? 0 };
}

/** The body the producer posts to `POST /v1/events`. */
export function eventBody(event: ChaosEvent): string {
  return JSON.stringify({
    id: event.id,
    source: CHAOS_SOURCE,
    type: CHAOS_TYPE,
    recipients: event.recipients,
    data: { orderId: event.id, index: event.index },
  });
}

export interface ExpectedOperation {
  key: string;
  event: number;
  recipient: string;
  /** The provider refuses the recipient: the operation must end dead. */
  rejected: boolean;
}

/** Operation keys the pipeline must derive for these events (docs/protocol.md "Names"), computed independently. */
export function expectedOperations(events: ChaosEvent[]): Map<string, ExpectedOperation> {
  const action = parseAction(CHAOS_ACTION);
  const out = new Map<string, ExpectedOperation>();
  for (const event of events) {
    const messageKey = eventMessageKey(CHAOS_SOURCE, event.id);
    for (const recipient of event.recipients) {
      const key = operationKey({ messageKey, action, recipient, channel: CHAOS_CHANNEL });
      out.set(key, { key, event: event.index, recipient, rejected: isRejectedRecipient(recipient) });
    }
  }
  return out;
}
