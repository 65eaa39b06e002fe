/**
 * Keeps an operation's lease alive while a send runs (docs/protocol.md invariant 10). Extends at
 * a third of the lease; when an extension is refused (a later claim exists) or
 * fails for longer than the lease, it aborts `signal` so the holder stops: a
 * holder that lost its lease must not commit, and should not keep a provider
 * call running for nothing.
 */
export interface LeaseKeeper {
  readonly signal: AbortSignal;
  /** Ms left before the lease ends, as far as this holder knows. */
  remainingMs(): number;
  lost(): boolean;
  stop(): void;
}

export function keepLease(input: {
  leaseMs: number;
  /**
   * When the claim that started the lease was sent. The lease runs from the
   * moment Redis ran the claim, which is before its answer was read: a holder
   * paused in between must not believe it still has a full lease.
   */
  startedAt?: number;
  extend: () => Promise<boolean>;
  now?: () => number;
  onLost?: (reason: string) => void;
}): LeaseKeeper {
  const now = input.now ?? Date.now;
  const controller = new AbortController();
  let leaseUntil = (input.startedAt ?? now()) + input.leaseMs;
  let stopped = false;
  let inFlight = false;

  const lose = (reason: string) => {
    if (controller.signal.aborted) return;
    controller.abort(new Error(`lease lost: ${reason}`));
    input.onLost?.(reason);
  };

  const timer = setInterval(
    () => {
      if (stopped) return;
      if (inFlight) {
        // An extension that never answers (the client connection queues commands
        // while Redis is away) must not keep a holder alive past its lease.
        if (now() >= leaseUntil) lose('lease ran out while an extension did not answer');
        return;
      }
      inFlight = true;
      const startedAt = now();
      input
        .extend()
        .then((ok) => {
          if (stopped) return;
          if (ok) leaseUntil = startedAt + input.leaseMs;
          else lose('a later claim holds the operation');
        })
        .catch(() => {
          // Redis unreachable: the lease may still be ours until it runs out.
          if (!stopped && now() >= leaseUntil) lose('lease ran out while Redis was unreachable');
        })
        .finally(() => {
          inFlight = false;
        });
    },
    Math.max(100, Math.floor(input.leaseMs / 3)),
  );
  timer.unref();

  return {
    signal: controller.signal,
    remainingMs: () => leaseUntil - now(),
    lost: () => controller.signal.aborted,
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}
