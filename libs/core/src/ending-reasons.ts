/**
 * Why an operation ended `dead` (its DLQ record's and journal's `reason`,
 * `singleshot_dead_total{reason}`). Listed in docs/contract.md.
 */
export const DEAD_REASONS = {
  permanent: 'the provider refused for good (invalid recipient, auth, payload)',
  attempts_exhausted: 'the last attempt failed',
  in_doubt_after_last_attempt: 'the last attempt ended in doubt and was not resolved',
  in_doubt_unresolvable: 'an in-doubt send cannot be checked (no lookup) and inDoubtPolicy is "dead"',
  no_provider: 'no provider is configured for the channel',
  document_failed: 'a document the message needs could not be generated',
  invalid_payload: 'the deliver job fails validation (poison)',
  invalid_recipient: 'the recipient can never be taken by its channel (checked at fan-out, no provider called)',
  unknown: 'a DLQ record rebuilt from a state that holds no reason',
} as const;

/** A reason an operation ended `dead`. */
export type DeadReason = keyof typeof DEAD_REASONS;

/**
 * Why an operation ended `suppressed` (journal `reason`,
 * `singleshot_suppressed_total{reason}`). Listed in docs/contract.md.
 */
export const SUPPRESS_REASONS = {
  rate_limit: 'a recipient or channel send limit was reached',
  recipient_suppressed: 'the recipient is on the suppression list (a hard bounce, a complaint, an operator) for this channel',
  opted_out: 'the recipient opted out of this category or channel (preferences, one-click unsubscribe)',
} as const;

/** A reason an operation ended `suppressed`. */
export type SuppressReason = keyof typeof SUPPRESS_REASONS;
