import { suppressionReasonOf, type FeedbackEvent, type SuppressionReason } from '@singleshot/core';
import type { Metrics } from '@singleshot/observability';
import type { ParsedFeedback } from '@singleshot/providers';
import type { FeedbackStore } from '@singleshot/store';

/** Where a suppression signal came from: the feedback event that carried it. */
export interface SuppressionOrigin {
  source: string;
  eventId: string;
  operationKey: string;
  providerType: string;
}

/**
 * Called for each event whose recorded verdict says "no more sends to this
 * recipient" (a hard bounce, a complaint, an opt-out), and again for each
 * repeat of it, so it must be idempotent. The default does nothing: writing
 * the suppression that the claim honours is wired here.
 */
export type SuppressionSignal = (channel: string, recipient: string, reason: SuppressionReason, origin: SuppressionOrigin) => void | Promise<void>;

/** pino-compatible subset. */
interface RecorderLogger {
  info(obj: object, msg?: string): void;
}

/** What one post's events came to. */
export interface FeedbackTally {
  recorded: number;
  duplicate: number;
  unmatched: number;
  ignored: number;
}

export interface FeedbackRecorderDeps {
  store: FeedbackStore;
  metrics: Pick<Metrics, 'feedbackEvents'>;
  logger: RecorderLogger;
  onSuppressionSignal?: SuppressionSignal;
}

/**
 * Records the events of one verified feedback post, in the order the post
 * lists them, each once per provider event id. An event without an operation
 * of ours (no key carried back, or the operation expired) is counted and
 * logged (`feedback_unmatched`), not refused: the provider must not retry it.
 */
export class FeedbackRecorder {
  constructor(private readonly deps: FeedbackRecorderDeps) {}

  async record(source: string, parsed: ParsedFeedback): Promise<FeedbackTally> {
    const tally: FeedbackTally = { recorded: 0, duplicate: 0, unmatched: 0, ignored: parsed.ignored.length };
    for (const providerType of parsed.ignored) {
      this.deps.metrics.feedbackEvents.inc({ provider: source, type: 'none', result: 'ignored' });
      this.deps.logger.info({ event: 'feedback_ignored', source, providerType }, 'feedback event not recorded (not a delivery outcome)');
    }
    for (const event of parsed.events) await this.one(source, event, tally);
    return tally;
  }

  private async one(source: string, event: FeedbackEvent, tally: FeedbackTally): Promise<void> {
    const { metrics, logger } = this.deps;
    const type = event.verdict.type;
    const result = event.operationKey ? await this.deps.store.record(event.operationKey, event) : ({ result: 'unmatched' } as const);
    if (result.result === 'unmatched') {
      tally.unmatched++;
      metrics.feedbackEvents.inc({ provider: source, type, result: 'unmatched' });
      logger.info(
        { event: 'feedback_unmatched', source, eventId: event.eventId, providerType: event.providerType, carriedKey: event.operationKey !== undefined },
        'feedback event matches no operation',
      );
      return;
    }
    tally[result.result]++;
    // The operation's provider name, so a rate over singleshot_deliveries_total{provider} joins on it.
    metrics.feedbackEvents.inc({ provider: result.provider ?? source, type, result: result.result });
    const operationKey = event.operationKey as string;
    logger.info(
      { event: 'feedback_recorded', source, operationKey, eventId: event.eventId, type, hard: event.verdict.hard, result: result.result, status: result.status },
      'feedback event',
    );
    // The verdict recorded under this id, not the one this post carries: a
    // duplicate that classifies otherwise (a provider reusing an id) must not
    // suppress where the recorded event did not.
    const reason = result.verdict ? suppressionReasonOf(result.verdict) : undefined;
    const recipient = result.recipient ?? event.recipient;
    // A duplicate signals again: the suppression of a first delivery that got
    // its event stored but failed to write the suppression (a 503, retried by
    // the provider) is written by the retry. Adding one that exists changes nothing.
    if (reason && recipient && result.channel && this.deps.onSuppressionSignal) {
      await this.deps.onSuppressionSignal(result.channel, recipient, reason, { source, eventId: event.eventId, operationKey, providerType: event.providerType });
    }
  }
}
