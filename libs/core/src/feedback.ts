/**
 * Provider feedback about a sent operation, in singleshot's own words
 * (docs/feedback.md). Every provider's event vocabulary is mapped onto these
 * types by one table per provider (libs/providers, `classifyFeedback`).
 */
export const FEEDBACK_TYPES = ['accepted', 'unsubscribed', 'deferred', 'delivered', 'bounced', 'failed', 'dropped', 'complained'] as const;

/** One feedback event's meaning. */
export type FeedbackType = (typeof FEEDBACK_TYPES)[number];

/**
 * The rank of each type in an operation's summary status: the summary is the
 * highest-ranked type seen, so it only moves forward (a bounce after
 * `delivered` becomes the summary, a late `deferred` does not undo
 * `delivered`). `accepted` (the provider queued or sent it on) and
 * `unsubscribed` (an opt-out, not a delivery outcome) never become the summary
 * over another type. A soft bounce ranks under a hard one through
 * {@link feedbackRank}.
 */
const RANK: Record<FeedbackType, number> = {
  accepted: 0,
  unsubscribed: 0,
  deferred: 1,
  delivered: 2,
  bounced: 3,
  failed: 4,
  dropped: 5,
  complained: 7,
};

/** The summary rank of an event: a hard bounce (6) above a failure or a drop, a soft one (3) below. */
export function feedbackRank(type: FeedbackType, hard: boolean): number {
  return type === 'bounced' && hard ? 6 : RANK[type];
}

/**
 * What a provider's event means for singleshot: its type, whether it is
 * final for the address (a hard bounce: the address does not exist), and
 * whether it should stop further sends to the recipient (a hard bounce, a
 * complaint, an opt-out). `suppress` is data here; the suppression itself is
 * written by whoever handles `onSuppressionSignal`.
 */
export interface FeedbackVerdict {
  type: FeedbackType;
  hard: boolean;
  suppress: boolean;
}

/** Why a recipient should get no more sends, as a feedback event says. */
export type SuppressionReason = 'hard_bounce' | 'complaint' | 'unsubscribe';

/** The suppression reason a verdict carries, or undefined when it carries none. */
export function suppressionReasonOf(verdict: FeedbackVerdict): SuppressionReason | undefined {
  if (!verdict.suppress) return undefined;
  if (verdict.type === 'complained') return 'complaint';
  if (verdict.type === 'unsubscribed') return 'unsubscribe';
  return 'hard_bounce';
}

/** One provider event about one recipient of one message, normalized. */
export interface FeedbackEvent {
  /** The feedback endpoint it came through: ses, sendgrid, postmark, mailgun, twilio. */
  source: string;
  /** The provider's own id of this event, unique per event (and recipient); the dedup key. */
  eventId: string;
  /** The operation the provider carried back (tag, custom arg, header, callback URL), when it did. */
  operationKey?: string;
  /** The provider's message id (SES MessageId, sg_message_id, Postmark MessageID, Twilio MessageSid…). */
  providerMessageId?: string;
  recipient?: string;
  /** The provider's own name of the event (`Bounce`, `bounce`, `HardBounce`, `failed`, `undelivered`…). */
  providerType: string;
  verdict: FeedbackVerdict;
  /** When the provider says it happened (ms), if it says. */
  occurredAt?: number;
  /** A short reason (bounce subtype, SMTP diagnostic, error code), bounded in length. */
  detail?: string;
}
