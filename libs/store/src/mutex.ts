import type { RedisClient } from './connection';
import { decimal } from './script-options';
import { runScript } from './scripts';

/**
 * A lease-style mutex (SET NX PX, renewed by its owner): at most one holder at a
 * time across processes, and a holder that dies frees it after the lease. Not a
 * correctness lock (nothing is fenced by it): the recovery sweeper uses it only
 * so that several delivery processes do not all scan the same index.
 */
export class RedisMutex {
  constructor(
    private readonly redis: RedisClient,
    private readonly key: string,
    private readonly owner: string,
  ) {}

  /** Takes the mutex, or renews it when this owner already holds it. */
  async acquire(leaseMs: number): Promise<boolean> {
    return Number(await runScript(this.redis, 'mutex-acquire', [this.key], { owner: this.owner, leaseMs: decimal(leaseMs) })) === 1;
  }

  /** Frees it when still held by this owner. */
  async release(): Promise<boolean> {
    return Number(await runScript(this.redis, 'mutex-release', [this.key], { owner: this.owner })) === 1;
  }
}
