import type { RedisClient } from './connection';
import { normalizeRecipient } from '@singleshot/core';
import type { KeyBuilder } from './keys';
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
   * Gives a slot back (an operation let through by one scope and then stopped by
   * another must not keep the first scope's slot).
   */
  async release(scope: string, recipient: string, operationKey: string): Promise<void> {
    await this.redis.zrem(this.keys.rateLimit(scope, normalizeRecipient(recipient)), operationKey);
  }
}
