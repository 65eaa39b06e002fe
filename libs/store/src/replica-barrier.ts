/**
 * Coalesces replica waits: every caller of one event-loop turn shares one
 * wait (one `WAIT` per master), sent after all of their writes were answered.
 * `WAIT` covers every write the connection sent before it, so one wait after
 * the turn's claims makes all of them durable on a replica at once, instead of
 * one `WAIT` round trip per operation.
 */
export class ReplicaBarrier {
  private pending: { keys: Set<string>; done: Promise<void> } | undefined;

  /** @param wait the replica wait for a set of keys (`Runtime.replicate` on the connection that wrote them). */
  constructor(private readonly wait: (keys: readonly string[]) => Promise<void>) {}

  /**
   * Resolves once the writes to `keys` answered so far are on enough replicas;
   * rejects when the wait failed (a timeout or a dead master): the caller must
   * then treat those writes as possibly lost.
   */
  after(keys: readonly string[]): Promise<void> {
    if (!this.pending) {
      const batch = new Set<string>();
      // setImmediate, not a microtask: the claims whose answers arrive in the
      // same I/O phase join this wait.
      const done = new Promise<void>((resolve, reject) => {
        setImmediate(() => {
          this.pending = undefined;
          this.wait([...batch]).then(resolve, reject);
        });
      });
      this.pending = { keys: batch, done };
    }
    for (const key of keys) this.pending.keys.add(key);
    return this.pending.done;
  }
}
