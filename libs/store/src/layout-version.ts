import { SingleshotError } from '@singleshot/core';

/**
 * The version of the key and field layout this code reads and writes. A
 * process must never act on data it would misread (a status it does not know,
 * a field with another meaning), so the layout it was written for is named
 * here and kept in Redis, one copy per shard (BullMQ keeps its version in the
 * queue's `meta`); a new version comes with a numbered migration and its test.
 * lua/include/layout.lua holds the same number.
 */
export const LAYOUT_VERSION = 1;

/**
 * A script that changes an operation's state found its shard stamped with
 * another layout and did nothing (`upgrade_required`): this process is older
 * than the data. The job that asked is put back untouched, and the process
 * stops taking work (`layoutRefusal`).
 */
export class UpgradeRequiredError extends SingleshotError {
  constructor(readonly held: string) {
    super(`Redis holds layout ${held}, which this singleshot (layout ${LAYOUT_VERSION}) was not written for: upgrade this process`, 'UPGRADE_REQUIRED');
  }
}

/**
 * Whether this process has met a layout it does not know since it started.
 * Once set it stays: the process stops taking jobs, `/readyz` answers 503 and
 * `singleshot_layout_upgrade_required` is 1, until it is replaced by a newer one.
 */
export class LayoutRefusal {
  private held: string | undefined;
  private readonly listeners: ((held: string) => void)[] = [];

  /** Records the layout a script found; returns true the first time, when the listeners hear of it. */
  note(held: string): boolean {
    if (this.held !== undefined) return false;
    this.held = held;
    for (const listener of this.listeners) listener(held);
    return true;
  }

  /** Calls `listener` once, when the first refusal is noted (the process logs it). */
  onRefused(listener: (held: string) => void): void {
    this.listeners.push(listener);
  }

  /** The layout met, or undefined while every script acted. */
  refused(): string | undefined {
    return this.held;
  }
}

/** The process's one record (each process has one layout: its code's). */
export const layoutRefusal = new LayoutRefusal();
