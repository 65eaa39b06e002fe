import type { Derived } from './derive';
import { HandOffAbortedError, type HandOff, type Origin, type Outcome } from './hand-off';

/**
 * One connection of a source, as its adapter sees it (source-loop.ts): the
 * signal that ends the acceptances it started, and the one way to hand a
 * message to acceptance and settle it at the origin.
 */
export interface SourceSession {
  /**
   * Aborted once this connection's consumption ended (or the relay stops):
   * an acceptance still waiting for Redis then gives up and its message stays
   * unacknowledged at the origin, which gives it again.
   */
  readonly signal: AbortSignal;
  /** True once the source is stopping: a consume loop ends at its next turn. */
  readonly stopping: boolean;
  /**
   * Hands one message to acceptance (HandOff) and, only once that resolved
   * (accepted, a duplicate, or recorded dead as `invalid`), runs `settle`
   * with the outcome: the ack, reject, delete or commit at the origin.
   * Resolves true once settled, false when the session ended first (nothing
   * settled, the message comes again: an ordinary duplicate arrival); rejects
   * only with what `settle` threw. Counted in flight until it resolves: the
   * loop waits for it before it disconnects.
   */
  accept(derived: Derived, origin: Origin, settle?: (outcome: Outcome) => unknown, options?: { onWait?: () => void }): Promise<boolean>;
}

/** A session and what only the loop does with it. */
export interface OpenSession extends SourceSession {
  /** Aborts the session's acceptances that still wait, then waits for every one in flight to resolve. */
  drain(): Promise<void>;
}

/** Opens the session of one connection of source `name`; `stopping` is read at each call. */
export function openSession(handOff: HandOff, name: string, relaySignal: AbortSignal, stopping: () => boolean): OpenSession {
  const ended = new AbortController();
  const signal = AbortSignal.any([relaySignal, ended.signal]);
  const inFlight = new Set<Promise<unknown>>();
  return {
    signal,
    get stopping() {
      return stopping();
    },
    accept(derived, origin, settle, options) {
      const work = (async () => {
        try {
          const outcome = await handOff.handle(name, derived, origin, { signal, ...(options?.onWait ? { onWait: options.onWait } : {}) });
          await settle?.(outcome);
          return true;
        } catch (err) {
          if (err instanceof HandOffAbortedError) return false;
          throw err;
        }
      })();
      const tracked = work.catch(() => undefined);
      inFlight.add(tracked);
      void tracked.finally(() => inFlight.delete(tracked));
      return work;
    },
    async drain() {
      ended.abort();
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
  };
}
