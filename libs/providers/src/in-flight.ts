import { RetryableError } from '@singleshot/core';

/**
 * The sends a provider has in flight, so `close()` can stop new ones and wait
 * for the running ones (each is bounded by its own deadline) before it frees
 * the transport. A send after close is refused as retryable and safe to fall
 * back: nothing left this process.
 */
export class InFlight {
  private readonly calls = new Set<Promise<unknown>>();
  private closed = false;

  constructor(private readonly name: string) {}

  async run<T>(send: () => Promise<T>): Promise<T> {
    if (this.closed) throw new RetryableError(`${this.name}: provider is closed`, 'PROVIDER_CLOSED', { safeToFallback: true });
    const call = send();
    this.calls.add(call);
    try {
      return await call;
    } finally {
      this.calls.delete(call);
    }
  }

  /** False when it was closed already. */
  async close(): Promise<boolean> {
    if (this.closed) return false;
    this.closed = true;
    await Promise.allSettled([...this.calls]);
    return true;
  }
}
