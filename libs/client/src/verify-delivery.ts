import { DeliveryVerificationError } from './errors';

/** What singleshot's `http` provider POSTs (docs/contract.md, "Outbound HTTP provider"). */
export interface Delivery {
  operationKey: string;
  messageKey: string;
  recipient: string;
  channel: string;
  subject: string;
  text: string;
  data: Record<string, unknown>;
}

/** Where a receiver remembers the deliveries it took. Use a shared, durable store (Redis, SQL) across replicas. */
export interface DeliveryStore {
  /**
   * Atomically: when `key` is unknown, mark it pending and answer `new`;
   * otherwise answer its state. (Redis: `SET key pending NX PX ttl`, then `GET`.)
   */
  begin(key: string, ttlMs: number): Promise<{ state: 'new' } | { state: 'pending' } | { state: 'done'; id: string }>;
  /** Records the id the receiver answered with for `key`. */
  complete(key: string, id: string, ttlMs: number): Promise<void>;
  /** Forgets a pending `key` after the receiver failed to act on it, so the next delivery retries. */
  abandon(key: string): Promise<void>;
  /** The state of `key` without changing it; undefined when unknown. */
  peek(key: string): Promise<{ state: 'pending' } | { state: 'done'; id: string } | undefined>;
}

/**
 * In-process store for tests and single-process receivers. It forgets on
 * restart, so it is not dedup across restarts or replicas.
 */
export class MemoryDeliveryStore implements DeliveryStore {
  private readonly entries = new Map<string, { id?: string; expiresAt: number }>();

  async begin(key: string, ttlMs: number) {
    const now = Date.now();
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt > now) return entry.id === undefined ? { state: 'pending' as const } : { state: 'done' as const, id: entry.id };
    this.entries.set(key, { expiresAt: now + ttlMs });
    return { state: 'new' as const };
  }

  async complete(key: string, id: string, ttlMs: number) {
    this.entries.set(key, { id, expiresAt: Date.now() + ttlMs });
  }

  async abandon(key: string) {
    const entry = this.entries.get(key);
    if (entry && entry.id === undefined) this.entries.delete(key);
  }

  async peek(key: string) {
    const entry = this.entries.get(key);
    if (!entry || entry.expiresAt <= Date.now()) return undefined;
    return entry.id === undefined ? { state: 'pending' as const } : { state: 'done' as const, id: entry.id };
  }
}

export interface VerifyOptions {
  store: DeliveryStore;
  /** How long a key is remembered; longer than singleshot retries (default 7 days, its retention). */
  ttlMs?: number;
}

/**
 * The three answers a receiver gives, each with the status and body the http
 * provider reads correctly:
 * - `new`: act on `delivery`, then `await commit(id)` and answer `200 { id }`
 *   (or `await abandon()` and answer 5xx, so the next delivery tries again);
 * - `duplicate`: already taken; answer `200 { id }` with the SAME id, nothing else;
 * - `in_progress`: a copy of this delivery is being handled right now; answer
 *   `409` and singleshot retries later.
 */
export type Verified =
  | { kind: 'new'; delivery: Delivery; commit(id: string): Promise<void>; abandon(): Promise<void> }
  | { kind: 'duplicate'; delivery: Delivery; id: string }
  | { kind: 'in_progress'; delivery: Delivery };

type HeaderBag = Record<string, string | string[] | undefined> | { get(name: string): string | null };

function headerValue(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  const found = Object.keys(bag).find((k) => k.toLowerCase() === name);
  const value = found === undefined ? undefined : bag[found];
  return Array.isArray(value) ? value[0] : value;
}

function parseDelivery(body: unknown): Delivery {
  let value = body;
  if (typeof body === 'string' || body instanceof Uint8Array) {
    try {
      value = JSON.parse(typeof body === 'string' ? body : Buffer.from(body).toString('utf8'));
    } catch {
      throw new DeliveryVerificationError('the body is not JSON', 'INVALID_BODY');
    }
  }
  const d = value as Partial<Delivery> | null;
  const strings = ['operationKey', 'messageKey', 'recipient', 'channel', 'subject', 'text'] as const;
  if (typeof d !== 'object' || d === null || strings.some((k) => typeof d[k] !== 'string') || typeof d.data !== 'object' || d.data === null) {
    throw new DeliveryVerificationError(`the body must have string ${strings.join(', ')} and an object data`, 'INVALID_BODY');
  }
  return d as Delivery;
}

/**
 * For receivers of singleshot's `http` provider: checks that the request
 * carries `Idempotency-Key`, that it equals the body's `operationKey` (the
 * same on every attempt of one operation), and deduplicates on it through
 * `store`. Throws DeliveryVerificationError (codes MISSING_IDEMPOTENCY_KEY,
 * KEY_MISMATCH, INVALID_BODY; answer 400) for requests that are not well-formed
 * deliveries. `body` is the raw body (string/bytes) or the parsed JSON.
 */
export async function verifyDelivery(request: { headers: HeaderBag; body: unknown }, options: VerifyOptions): Promise<Verified> {
  const key = headerValue(request.headers, 'idempotency-key')?.trim();
  if (!key) throw new DeliveryVerificationError('the Idempotency-Key header is missing', 'MISSING_IDEMPOTENCY_KEY');
  const delivery = parseDelivery(request.body);
  if (delivery.operationKey !== key) throw new DeliveryVerificationError('Idempotency-Key does not match the body operationKey', 'KEY_MISMATCH');
  const ttlMs = options.ttlMs ?? 7 * 24 * 3600 * 1000;
  const state = await options.store.begin(key, ttlMs);
  if (state.state === 'done') return { kind: 'duplicate', delivery, id: state.id };
  if (state.state === 'pending') return { kind: 'in_progress', delivery };
  return {
    kind: 'new',
    delivery,
    commit: (id: string) => options.store.complete(key, id, ttlMs),
    abandon: () => options.store.abandon(key),
  };
}

/**
 * Answers singleshot's reconcile lookup (`GET <lookupUrl>/<operation key>`)
 * from the same store: `200 { id }` when the delivery was taken, `404` when
 * it never was. A pending key is neither: `409`, and singleshot asks again.
 */
export async function lookupDelivery(store: DeliveryStore, key: string): Promise<{ status: 200; body: { id: string } } | { status: 404 | 409 }> {
  const state = await store.peek(key);
  if (!state) return { status: 404 };
  return state.state === 'done' ? { status: 200, body: { id: state.id } } : { status: 409 };
}
