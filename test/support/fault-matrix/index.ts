import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeBehaviour, FakeProviderApi } from '@singleshot/test-harness';

/** The slice of the provider port the matrix drives (the harness imports nothing of ours). */
export interface SendRequest {
  operationKey: string;
  messageKey: string;
  recipient: string;
  channel: string;
  subject: string;
  text: string;
  data: Record<string, unknown>;
}
interface Provider {
  send(req: SendRequest, ctx: { signal: AbortSignal; timeoutMs: number }): Promise<{ externalId: string }>;
  close(): Promise<void>;
}
/** Error classes of @singleshot/core, by `name` (how its callers classify). */
type ErrorClass = 'RetryableError' | 'PermanentError' | 'InDoubtError';

/**
 * The fault cases every native provider must classify the same way, run
 * against its fake vendor API (test/harness/fake-provider-dialects.ts).
 * Imported by each provider's test file; not a test file itself.
 */
export interface MatrixSetup {
  label: string;
  start(): Promise<FakeProviderApi>;
  /** A provider pointed at the fake; `timeoutMs` bounds the hang case. */
  provider(api: FakeProviderApi, timeoutMs: number): Provider;
  recipient: string;
  /** The fake's dedup key of a request for this operation. */
  keyOf(req: SendRequest): string;
}

let n = 0;
export function request(recipient: string): SendRequest {
  n += 1;
  return { operationKey: createHash('sha256').update(`op-${process.pid}-${n}`).digest('hex'), messageKey: `msg-${n}`, recipient, channel: 'c', subject: `Order ${n}`, text: `Order ${n} was created`, data: {} };
}

export const ctx = (timeoutMs = 5_000) => ({ signal: new AbortController().signal, timeoutMs });

export async function caught(promise: Promise<unknown>): Promise<Error & { code?: string; safeToFallback?: boolean; retryAfterMs?: number }> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the send to fail');
}

export function faultMatrix(setup: MatrixSetup): void {
  describe(`${setup.label}: fault matrix against the fake API`, () => {
    let api: FakeProviderApi;
    let provider: Provider;
    beforeAll(async () => {
      api = await setup.start();
      provider = setup.provider(api, 5_000);
    });
    afterAll(async () => {
      await provider?.close();
      await api?.close();
    });

    it('sends once and returns the vendor id', async () => {
      const req = request(setup.recipient);
      const result = await provider.send(req, ctx());
      const taken = api.accepted.get(setup.keyOf(req));
      expect(taken?.count).toBe(1);
      expect(result.externalId).toBe(taken?.ids[0]);
    });

    const cases: Array<[string, FakeBehaviour, ErrorClass]> = [
      ['429 throttling → retryable', 'throttle', 'RetryableError'],
      ['500 → retryable', 'server-error', 'RetryableError'],
      ['503 → retryable', 'unavailable', 'RetryableError'],
      ['invalid recipient → permanent', 'invalid-recipient', 'PermanentError'],
      ['bad credentials → permanent', 'auth', 'PermanentError'],
      ['accepted, then the connection dropped → in doubt', 'accept-then-drop', 'InDoubtError'],
      ['reset after the request was written → in doubt', 'reset', 'InDoubtError'],
    ];
    for (const [title, behaviour, cls] of cases) {
      it(title, async () => {
        const req = request(setup.recipient);
        api.scriptFor(setup.recipient, behaviour);
        const err = await caught(provider.send(req, ctx()));
        expect(err.name).toBe(cls);
        expect(typeof err.code).toBe('string');
        if (cls === 'RetryableError') expect(err.safeToFallback).toBe(false);
        expect(api.countFor(setup.keyOf(req))).toBe(1);
      });
    }

    it('no answer within the deadline → in doubt', async () => {
      const short = setup.provider(api, 300);
      const req = request(setup.recipient);
      api.scriptFor(setup.recipient, 'hang');
      const err = await caught(short.send(req, ctx()));
      expect(err.name).toBe('InDoubtError');
      await short.close();
    });

    it('connection refused → retryable and safe to fall back, nothing reached the vendor', async () => {
      const before = api.requests.length;
      await api.down();
      try {
        const fresh = setup.provider(api, 2_000);
        const err = await caught(fresh.send(request(setup.recipient), ctx()));
        expect(err.name).toBe('RetryableError');
        expect(err.code).toBe('ECONNREFUSED');
        expect(err.safeToFallback).toBe(true);
        expect(api.requests.length).toBe(before);
        await fresh.close();
      } finally {
        await api.up();
      }
    });
  });
}
