import type { RedisClient } from './connection';
import type { KeyBuilder } from './keys';

/** One change of a suppression or an opt-out, as `Suppressions` appended it to the audit stream. */
export interface SuppressionAuditEntry {
  /** The stream id (`<ms>-<seq>`). */
  id: string;
  at: number;
  /** `add`, `add_existing` (the same one was there: the first stands), `remove`, `opt_outs`. */
  change: string;
  recipient: string;
  /** The rest of the entry: `field` (`s|<channel>|<category or *>`), `by`, `reason`, `origin`, … */
  detail: Record<string, string>;
}

/** The most the audit is read in one call: an operator's page, not an export. */
export const SUPPRESSION_AUDIT_MAX = 1_000;

/**
 * The newest entries of the suppression audit stream, newest first, at most
 * `limit` (capped at SUPPRESSION_AUDIT_MAX), optionally those strictly older
 * than the stream id `before` (the next page). The stream is trimmed by
 * retention when written, so this is the recent history, not all of it.
 */
export async function readSuppressionAudit(
  redis: Pick<RedisClient, 'xrevrange'>,
  keys: Pick<KeyBuilder, 'suppressionAudit'>,
  options: { limit: number; before?: string },
): Promise<SuppressionAuditEntry[]> {
  const count = Math.max(1, Math.min(SUPPRESSION_AUDIT_MAX, Math.floor(options.limit)));
  // '(' makes the end exclusive: the page after the last entry seen starts below it.
  const end = options.before === undefined ? '+' : `(${options.before}`;
  const rows = (await redis.xrevrange(keys.suppressionAudit(), end, '-', 'COUNT', count)) as Array<[string, string[]]>;
  return rows.map(([id, flat]) => {
    const detail: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) detail[flat[i] as string] = flat[i + 1] as string;
    const { change = '', recipient = '', ...rest } = detail;
    return { id, at: Number(id.split('-')[0]), change, recipient, detail: rest };
  });
}
