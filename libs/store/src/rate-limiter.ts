import type { RedisClient } from './connection';
import { normalizeRecipient, type Verdict } from '@singleshot/core';
import type { KeyBuilder } from './keys';
import type { ClaimLimit } from './operation-store';
import { decimal } from './script-options';
import { runScript } from './scripts';

export interface RateLimitCheck {
  /** `global`, or `route:<name>` for a route's own limit. */
  scope: string;
  recipient: string;
  operationKey: string;
  max: number;
  windowMs: number;
  /** Count the operation whatever the window holds (a replay that bypasses the limit once). */
  force?: boolean;
}

export type RateLimitVerdict =
  | { allowed: true; count: number; added: boolean }
  | { allowed: false; count: number; retryInMs: number };

/** One limit that applies to an operation: its scope (`global`, `route:<name>`), how many per window. */
export interface LimitScope {
  scope: string;
  max: number;
  windowMs: number;
}

/**
 * The windows of an operation as read before its claim (`admit`): the slots
 * this read took, and the limit it is over, if any (the claim's `limit`).
 * `settle` squares them with the claim's verdict.
 */
export interface Admission {
  recipient: string;
  operationKey: string;
  scopes: readonly LimitScope[];
  /** The scopes this read added the operation to (not those that had it already). */
  taken: string[];
  /** The first scope that stopped it; the slots the others took were given back. */
  over?: ClaimLimit;
}

/**
 * Per-recipient sliding windows in Redis (`rate-limit.lua`), one sorted set
 * per scope and recipient. Counting operation keys, not calls, makes the check
 * idempotent: a retried or reclaimed operation that was let through once is let
 * through again without taking a second slot.
 */
export class RateLimiter {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeyBuilder,
    private readonly now: () => number = Date.now,
  ) {}

  async check(input: RateLimitCheck): Promise<RateLimitVerdict> {
    const now = this.now();
    const [allowed, count, extra] = (await runScript(
      this.redis,
      'rate-limit',
      [this.keys.rateLimit(input.scope, normalizeRecipient(input.recipient))],
      {
        now: decimal(now),
        windowStart: decimal(now - input.windowMs),
        windowMs: decimal(input.windowMs),
        max: input.max,
        operationKey: input.operationKey,
        force: input.force === true,
      },
    )) as [number, number, string];
    if (Number(allowed) === 1) return { allowed: true, count: Number(count), added: extra === 'added' };
    return { allowed: false, count: Number(count), retryInMs: Math.max(0, Number(extra) + input.windowMs - now) };
  }

  /**
   * Reads the windows before the claim, in order, up to the first scope that
   * is full; the slots the scopes before it took go back then. The window
   * keys are per scope and recipient, so on a Redis Cluster they are in
   * other slots than the operation, and the claim cannot read them itself:
   * it is handed the outcome (`over` as its `limit`) and answers it.
   */
  async admit(recipient: string, operationKey: string, scopes: readonly LimitScope[]): Promise<Admission> {
    const admission: Admission = { recipient, operationKey, scopes, taken: [] };
    for (const { scope, max, windowMs } of scopes) {
      const verdict = await this.check({ scope, recipient, operationKey, max, windowMs });
      if (verdict.allowed) {
        if (verdict.added) admission.taken.push(scope);
        continue;
      }
      await this.giveBack(admission);
      const note = `${scope}: ${verdict.count} of ${max} per ${windowMs / 1000}s; a slot frees in ${Math.ceil(verdict.retryInMs / 1000)}s`;
      admission.over = { scope, count: verdict.count, max, note };
      break;
    }
    return admission;
  }

  /**
   * Squares the slots `admit` took with what the claim answered. Only an
   * operation's first claim that goes is counted (later claims were counted
   * at the first): a claim that ended it, marked a wait (it is looked at
   * again when it wakes), or went as a later claim gives back the slots this
   * read took. A first claim that went over a full window was released by a
   * replay (`limitBypass`): it passes once and still takes its slot in every
   * scope. A conflict keeps them: another holder has the operation.
   */
  async settle(admission: Admission, verdict: Verdict): Promise<void> {
    if (verdict.kind === 'conflict') return;
    const first = verdict.kind === 'go' && (verdict.attempts <= 1 || verdict.previousStatus === 'pending');
    if (!first) {
      await this.giveBack(admission);
      return;
    }
    if (!admission.over || verdict.kind !== 'go' || !verdict.limitBypass) return;
    const { recipient, operationKey } = admission;
    await Promise.all(admission.scopes.map(({ scope, max, windowMs }) => this.check({ scope, recipient, operationKey, max, windowMs, force: true })));
  }

  private async giveBack(admission: Admission): Promise<void> {
    const taken = admission.taken.splice(0);
    await Promise.all(taken.map((scope) => this.release(scope, admission.recipient, admission.operationKey)));
  }

  /**
   * Gives a slot back (an operation let through by one scope and then stopped by
   * another must not keep the first scope's slot).
   */
  async release(scope: string, recipient: string, operationKey: string): Promise<void> {
    await this.redis.zrem(this.keys.rateLimit(scope, normalizeRecipient(recipient)), operationKey);
  }
}
