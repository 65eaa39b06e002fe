/**
 * Redis error codes that mean "not now": the server is up and answering, but
 * refuses writes (out of memory, a failed persistence, a replica, loading its
 * data, a busy script, a cluster reconfiguring). Retrying at once only adds
 * refused commands; every loop that meets one waits out a `RefusalBackoff`.
 */
export const REFUSAL_CODES = ['OOM', 'MISCONF', 'READONLY', 'LOADING', 'BUSY', 'CLUSTERDOWN', 'TRYAGAIN', 'NOREPLICAS', 'MASTERDOWN'] as const;
export type RefusalCode = (typeof REFUSAL_CODES)[number];

const CODES: ReadonlySet<string> = new Set(REFUSAL_CODES);

/**
 * The refusal code of a Redis error reply, else undefined. A reply error is
 * `-CODE message`: the first word is the protocol's error code (ioredis keeps
 * it as the start of the message of its `ReplyError`), and it is the only part
 * read: the free text after it is never classified.
 */
export function refusalCode(err: unknown): RefusalCode | undefined {
  if (!(err instanceof Error) || err.name !== 'ReplyError') return undefined;
  const word = codeWord(err.message);
  // A MULTI whose queued commands were refused fails as a whole with EXECABORT;
  // the refusal is the code of the first queued command's error.
  if (word === 'EXECABORT') return refusalCode((err as { previousErrors?: unknown[] }).previousErrors?.[0]);
  return CODES.has(word) ? (word as RefusalCode) : undefined;
}

function codeWord(message: string): string {
  const space = message.indexOf(' ');
  return space < 0 ? message : message.slice(0, space);
}

/** Options of a `RefusalBackoff`. */
export interface RefusalBackoffOptions {
  /** The first wait. */
  baseMs?: number;
  /** The longest wait (the bound of the exponential growth). */
  capMs?: number;
  now?: () => number;
  random?: () => number;
}

/**
 * One process's backoff against a Redis that refuses commands (`REFUSAL_CODES`).
 * Every loop of the process that meets a refusal calls `refused`, and waits
 * (`wait`) before its next try: the waits grow exponentially up to `capMs`,
 * with jitter (each wait is drawn between half and all of its step) so that
 * processes do not come back in step. Refusals met while a wait is under way
 * do not grow it: a dozen loops meeting the same refusal count as one.
 * `succeeded` ends the backoff; on a healthy Redis it is one comparison.
 */
export class RefusalBackoff {
  private readonly baseMs: number;
  private readonly capMs: number;
  private readonly now: () => number;
  private readonly random: () => number;
  private step = 0;
  private until = 0;
  private waitMs = 0;
  private code: RefusalCode | undefined;
  private lastRefusalAt = 0;

  constructor(options: RefusalBackoffOptions = {}) {
    this.baseMs = options.baseMs ?? 100;
    this.capMs = options.capMs ?? 5_000;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
  }

  /**
   * The code of the last refusal, while it is recent (within two longest waits:
   * a loop that still meets it meets it again by then). A process whose only
   * Redis traffic is answering requests (ingest) would otherwise stay
   * "refusing" forever once its readiness check sent the requests away.
   */
  refusing(): RefusalCode | undefined {
    if (this.code === undefined) return undefined;
    return this.now() - this.lastRefusalAt < 2 * this.capMs ? this.code : undefined;
  }

  /** The current wait in seconds (0 when Redis is not refusing): the `singleshot_redis_backoff_seconds` gauge. */
  backoffSeconds(): number {
    return this.refusing() ? this.waitMs / 1000 : 0;
  }

  /** True while a wait is under way (one comparison when Redis is healthy). */
  inBackoff(): boolean {
    return this.until !== 0 && this.now() < this.until;
  }

  /** Ms until the current wait ends (0 when none is under way). */
  remainingMs(): number {
    return Math.max(0, this.until - this.now());
  }

  /**
   * Records a refusal and returns how long to wait before the next try. Within
   * a wait already under way the same end is returned.
   */
  refused(code: RefusalCode): number {
    const now = this.now();
    // A refusal long after the last one (no success seen in between: an idle
    // process) starts a new backoff rather than going on with the old one.
    if (now - this.lastRefusalAt >= 2 * this.capMs) this.step = 0;
    this.code = code;
    this.lastRefusalAt = now;
    if (now < this.until) return this.until - now;
    const stepMs = Math.min(this.capMs, this.baseMs * 2 ** this.step);
    this.step = Math.min(this.step + 1, 30);
    this.waitMs = Math.round(stepMs / 2 + (this.random() * stepMs) / 2);
    this.until = now + this.waitMs;
    return this.waitMs;
  }

  /** Notes `err` when it is a refusal; returns its code (undefined for any other error). */
  noteError(err: unknown): RefusalCode | undefined {
    const code = refusalCode(err);
    if (code) this.refused(code);
    return code;
  }

  /** A command went through: the backoff ends. */
  succeeded(): void {
    if (this.code === undefined && this.step === 0) return;
    this.code = undefined;
    this.step = 0;
    this.until = 0;
    this.waitMs = 0;
  }

  /** Resolves when the current wait ends (at once when none is under way), or when `signal` aborts. */
  wait(signal?: AbortSignal): Promise<void> {
    const ms = this.remainingMs();
    if (ms <= 0 || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}

/**
 * The process's backoff: one Redis per process, so one view of whether it
 * refuses. Loops use it unless given their own (tests).
 */
export const redisRefusals = new RefusalBackoff();
