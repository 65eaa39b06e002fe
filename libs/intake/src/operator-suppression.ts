import { z } from 'zod';
import { normalizeRecipient, SingleshotError } from '@singleshot/core';
import type { RecipientSuppressions, Suppression, SuppressionList, SuppressionListPosition, Suppressions } from '@singleshot/store';

const channel = z.string().trim().min(1).max(100);
const recipient = z.string().trim().min(1).max(512).meta({ description: 'As the operation has it: an address is compared lower-cased, other recipients exactly.' });
const category = z.string().trim().min(1).max(100).optional().meta({ description: 'Only this category of the channel (default: every category).' });

/** A point in time in a body: epoch ms or an ISO 8601 date-time with a zone. */
const instant = z.union([z.int().min(0), z.iso.datetime({ offset: true }).transform((s) => Date.parse(s))], {
  error: 'expected epoch milliseconds or an ISO 8601 date-time such as 2030-01-31T12:00:00Z',
});

/** An operator's suppression (admin API body, the CLI's flags). */
export const suppressionAddSchema = z.strictObject({
  channel,
  recipient,
  category,
  reason: z.string().trim().min(1).max(500).meta({ description: 'Why, for the audit.' }),
  expiresAt: instant.optional().meta({ description: 'When it stops holding (default: until removed).' }),
});

/** Which suppression an operator removes. */
export const suppressionRemoveSchema = z.strictObject({ channel, recipient, category });

export type SuppressionAdd = z.output<typeof suppressionAddSchema>;
export type SuppressionRemove = z.output<typeof suppressionRemoveSchema>;

/** A suppression as an operator reads it: `expired` once its expiry has passed (the claim ignores it then). */
export type SuppressionView = Suppression & { expired: boolean };

/** A recipient's suppressions and opt-outs, for an operator. */
export type RecipientView = Omit<RecipientSuppressions, 'suppressions'> & { suppressions: SuppressionView[] };

/** An operator's suppression the store must not take (code `UNKNOWN_CHANNEL` or `INVALID_REQUEST`). */
export class SuppressionInputError extends SingleshotError {
  constructor(code: 'UNKNOWN_CHANNEL' | 'INVALID_REQUEST', message: string) {
    super(message, code);
  }
}

const cursorSchema = z.tuple([z.int().min(0), z.string().min(1)]);

/** A position in the list as the API hands it out: opaque, base64url of `[at, recipient]`. */
export function encodeCursor(position: SuppressionListPosition): string {
  return Buffer.from(JSON.stringify([position.at, position.recipient])).toString('base64url');
}

/** The position of a cursor `encodeCursor` made; anything else is the caller's to fix (`INVALID_REQUEST`). */
export function decodeCursor(cursor: string): SuppressionListPosition {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const result = cursorSchema.safeParse(parsed);
  if (!result.success) throw new SuppressionInputError('INVALID_REQUEST', 'cursor: not one this list handed out (pass the nextCursor of the previous page)');
  return { at: result.data[0], recipient: result.data[1] };
}

/**
 * Suppressions as an operator changes them, from the dashboard and the CLI
 * alike: the recipient normalized as the decision normalizes an operation's
 * (otherwise the claim, which looks up the operation's recipient, would never
 * find it), the channel checked against the configured ones (a typo would
 * stop nothing while looking done), an expiry only in the future, origin
 * `operator` and the caller's name as `by`. Every change is in the audit
 * (Suppressions writes it).
 */
export class OperatorSuppressions {
  constructor(
    private readonly store: Pick<Suppressions, 'add' | 'remove' | 'get'>,
    private readonly listing: Pick<SuppressionList, 'page'>,
    private readonly options: {
      /** The configured channels; undefined: any. */
      channels?: readonly string[];
      /** Called once per suppression that did not exist before (the metric). */
      onAdded?: () => void;
      now?: () => number;
    } = {},
  ) {}

  private checkChannel(name: string): void {
    const { channels } = this.options;
    if (channels && !channels.includes(name)) {
      throw new SuppressionInputError('UNKNOWN_CHANNEL', `no channel "${name}" is configured (channels: ${channels.join(', ') || 'none'})`);
    }
  }

  /** Adds one; false when the same one existed (the first one stands, with its reason and author). */
  async add(input: SuppressionAdd, by: string): Promise<boolean> {
    this.checkChannel(input.channel);
    const now = (this.options.now ?? Date.now)();
    if (input.expiresAt !== undefined && input.expiresAt <= now) {
      throw new SuppressionInputError('INVALID_REQUEST', `expiresAt ${new Date(input.expiresAt).toISOString()} is not in the future`);
    }
    const added = await this.store.add({
      channel: input.channel,
      recipient: normalizeRecipient(input.recipient),
      ...(input.category !== undefined ? { category: input.category } : {}),
      reason: input.reason,
      origin: 'operator',
      by,
      ...(input.expiresAt !== undefined ? { expiresAt: input.expiresAt } : {}),
    });
    if (added) this.options.onAdded?.();
    return added;
  }

  /** Removes one; false when there was none. Nothing it stopped is sent again. */
  async remove(input: SuppressionRemove, by: string): Promise<boolean> {
    this.checkChannel(input.channel);
    return this.store.remove({ channel: input.channel, recipient: normalizeRecipient(input.recipient), ...(input.category !== undefined ? { category: input.category } : {}), by });
  }

  /** A recipient's suppressions (each with `expired`) and opt-outs. */
  async get(raw: string): Promise<RecipientView> {
    const now = (this.options.now ?? Date.now)();
    const record = await this.store.get(normalizeRecipient(raw));
    return { ...record, suppressions: record.suppressions.map((s) => ({ ...s, expired: s.expiresAt !== undefined && s.expiresAt <= now })) };
  }

  /**
   * One page of the recipients on the suppression list (a suppression that
   * still holds, or an opt-out), newest on the list first; `nextCursor` is
   * where the next page starts (null: this was the last). Paging from cursor
   * to cursor meets each recipient that stays on the list exactly once, while
   * others are added or removed.
   */
  async list(cursor: string | undefined, limit: number): Promise<{ recipients: RecipientView[]; nextCursor: string | null }> {
    const page = await this.listing.page(limit, cursor === undefined ? undefined : decodeCursor(cursor));
    const views = await Promise.all(page.recipients.map((p) => this.get(p.recipient)));
    return {
      // One removed between the page and its read has nothing left to show.
      recipients: views.filter((v) => v.suppressions.length > 0 || v.optOuts.length > 0),
      nextCursor: page.next ? encodeCursor(page.next) : null,
    };
  }
}
