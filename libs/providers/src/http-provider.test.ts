import { createServer, type Server } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InDoubtError, PermanentError, RetryableError, ValidationError } from '@singleshot/core';
import { startHttpSink, type HttpSink, freePort } from '@singleshot/test-harness';
import { createProvider } from './create-provider';
import { HttpProvider } from './http-provider';
import type { CallContext, SendRequest } from './provider';

const ctx = (timeoutMs = 5_000, signal = new AbortController().signal): CallContext => ({ signal, timeoutMs });

let seq = 0;
function request(overrides: Partial<SendRequest> = {}): SendRequest {
  seq += 1;
  return {
    operationKey: `op-${seq}-${'a'.repeat(16)}`,
    messageKey: `msg-${seq}`,
    recipient: `user${seq}@example.test`,
    channel: 'webhook',
    subject: 'Order o-9',
    text: 'Order o-9 was created',
    data: { orderId: 'o-9', n: seq },
    ...overrides,
  };
}

async function caught(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the promise to reject');
}

describe('HttpProvider against a real HTTP sink', () => {
  let sink: HttpSink;
  let provider: HttpProvider;

  beforeAll(async () => {
    sink = await startHttpSink();
    provider = new HttpProvider({
      name: 'primary',
      type: 'http',
      url: sink.url,
      lookupUrl: sink.lookupUrl,
      timeoutMs: 5_000,
      headers: { Authorization: 'Bearer t0ken', 'Idempotency-Key': 'must-not-win' },
    });
  });
  afterEach(() => sink.reset());
  afterAll(async () => {
    await provider.close();
    await sink.close();
  });

  it('POSTs the contract body with Idempotency-Key and returns the provider id', async () => {
    const req = request();
    const result = await provider.send(req, ctx());

    const accepted = sink.accepted.get(req.operationKey);
    expect(accepted).toBeDefined();
    expect(result.externalId).toBe(accepted?.id);
    expect(sink.requests).toHaveLength(1);
    const seen = sink.requests[0];
    expect(seen?.headers['idempotency-key']).toBe(req.operationKey);
    expect(seen?.headers['content-type']).toBe('application/json');
    expect(seen?.headers.authorization).toBe('Bearer t0ken');
    expect(seen?.body).toEqual({
      operationKey: req.operationKey,
      messageKey: req.messageKey,
      recipient: req.recipient,
      channel: req.channel,
      subject: req.subject,
      text: req.text,
      data: req.data,
    });
  });

  it('gets the same id back when the same key is sent again (idempotent provider)', async () => {
    const req = request();
    const first = await provider.send(req, ctx());
    const second = await provider.send(req, ctx());
    expect(second.externalId).toBe(first.externalId);
    expect(sink.accepted.get(req.operationKey)?.count).toBe(2);
    expect(sink.accepted.size).toBe(1);
  });

  it.each([400, 401, 403, 404, 422, 410, 413, 301, 308])('maps HTTP %i to PermanentError', async (status) => {
    sink.script({ status, body: { error: 'nope' } });
    const err = await caught(provider.send(request(), ctx()));
    expect(err).toBeInstanceOf(PermanentError);
    expect((err as PermanentError).code).toBe(`HTTP_${status}`);
  });

  it.each([429, 500, 502, 503, 504, 408, 409])('maps HTTP %i to RetryableError, not safe to fall back', async (status) => {
    sink.script({ status, body: { error: 'later' } });
    const err = await caught(provider.send(request(), ctx()));
    expect(err).toBeInstanceOf(RetryableError);
    expect((err as RetryableError).code).toBe(`HTTP_${status}`);
    expect((err as RetryableError).safeToFallback).toBe(false);
    expect((err as RetryableError).retryAfterMs).toBeUndefined();
  });

  it('maps 303 See Other to InDoubtError (a processed POST may answer that way)', async () => {
    sink.script({ status: 303, headers: { location: '/elsewhere' } });
    const err = await caught(provider.send(request(), ctx()));
    expect(err).toBeInstanceOf(InDoubtError);
    expect((err as InDoubtError).code).toBe('HTTP_303');
  });

  it('honours Retry-After in seconds and as an HTTP date', async () => {
    sink.script({ status: 429, headers: { 'retry-after': '7' } });
    const inSeconds = await caught(provider.send(request(), ctx()));
    expect((inSeconds as RetryableError).retryAfterMs).toBe(7_000);

    const at = new Date(Date.now() + 120_000).toUTCString();
    sink.script({ status: 503, headers: { 'retry-after': at } });
    const asDate = await caught(provider.send(request(), ctx()));
    expect(asDate).toBeInstanceOf(RetryableError);
    const ms = (asDate as RetryableError).retryAfterMs ?? -1;
    expect(ms).toBeGreaterThan(60_000);
    expect(ms).toBeLessThanOrEqual(120_000);
  });

  it.each([
    ['200 {} (accepted by the sink)', 'no-id' as const],
    ['200 with a non-JSON body', { status: 200, body: 'queued', accept: true }],
    ['201 with an empty id', { status: 201, body: { id: '' }, accept: true }],
    ['200 with a numeric id', { status: 200, body: { id: 42 }, accept: true }],
    ['204 without a body', { status: 204, accept: true }],
  ])('treats %s as in doubt (NO_PROVIDER_ID), never as sent', async (_label, behaviour) => {
    const req = request();
    sink.script(behaviour);
    const err = await caught(provider.send(req, ctx()));
    expect(err).toBeInstanceOf(InDoubtError);
    expect((err as InDoubtError).code).toBe('NO_PROVIDER_ID');
    // The provider did take it: the doubt is real, and lookup resolves it.
    expect(await provider.lookup?.(req.operationKey, ctx())).toEqual({
      found: true,
      externalId: sink.accepted.get(req.operationKey)?.id,
    });
  });

  it('reports accept-then-drop as in doubt, and lookup finds the message', async () => {
    const req = request();
    sink.script('accept-then-drop');
    const err = await caught(provider.send(req, ctx()));
    expect(err).toBeInstanceOf(InDoubtError);
    expect(sink.accepted.has(req.operationKey)).toBe(true);
    const found = await provider.lookup?.(req.operationKey, ctx());
    expect(found).toEqual({ found: true, externalId: sink.accepted.get(req.operationKey)?.id });
  });

  it('reports a reset after the request was written as in doubt; lookup says not found', async () => {
    const req = request();
    sink.script('refuse');
    const err = await caught(provider.send(req, ctx()));
    expect(err).toBeInstanceOf(InDoubtError);
    expect(sink.countFor(req.operationKey)).toBe(1);
    expect(await provider.lookup?.(req.operationKey, ctx())).toEqual({ found: false });
  });

  it('hits the caller deadline on a hanging provider: in doubt with code DEADLINE', async () => {
    const req = request();
    sink.script('accept-then-hang');
    const err = await caught(provider.send(req, ctx(300)));
    expect(err).toBeInstanceOf(InDoubtError);
    expect((err as InDoubtError).code).toBe('DEADLINE');
    expect(await provider.lookup?.(req.operationKey, ctx())).toMatchObject({ found: true });
  });

  it('caps the call at options.timeoutMs even when the caller allows more', async () => {
    const short = new HttpProvider({ name: 'short', type: 'http', url: sink.url, timeoutMs: 300 });
    try {
      sink.script('hang');
      const err = await caught(short.send(request(), ctx(60_000)));
      expect(err).toBeInstanceOf(InDoubtError);
      expect((err as InDoubtError).code).toBe('DEADLINE');
    } finally {
      await short.close();
    }
  });

  it('treats the caller aborting mid-request as in doubt (code ABORTED)', async () => {
    const controller = new AbortController();
    sink.script('hang');
    const pending = caught(provider.send(request(), ctx(10_000, controller.signal)));
    await sink.waitFor((s) => s.requests.length === 1);
    controller.abort(new Error('lease lost'));
    const err = await pending;
    expect(err).toBeInstanceOf(InDoubtError);
    expect((err as InDoubtError).code).toBe('ABORTED');
  });

  it('never sends when the signal is already aborted: retryable and safe to fall back', async () => {
    const controller = new AbortController();
    controller.abort();
    const err = await caught(provider.send(request(), ctx(5_000, controller.signal)));
    expect(err).toBeInstanceOf(RetryableError);
    expect((err as RetryableError).safeToFallback).toBe(true);
    expect(sink.requests).toHaveLength(0);
  });

  it('takes the caller cancellation through `cancel` without reading `signal`: mid-request it is in doubt (ABORTED)', async () => {
    let listener: ((reason: Error) => void) | undefined;
    let signalRead = false;
    const cancelCtx: CallContext = {
      timeoutMs: 10_000,
      get signal(): AbortSignal {
        signalRead = true;
        return new AbortController().signal;
      },
      cancel: {
        cancelled: () => undefined,
        onCancel: (l) => {
          listener = l;
        },
        offCancel: (l) => {
          if (listener === l) listener = undefined;
        },
      },
    };
    sink.script('hang');
    const pending = caught(provider.send(request(), cancelCtx));
    await sink.waitFor((s) => s.requests.length === 1);
    expect(listener).toBeDefined();
    listener?.(new Error('lease lost'));
    const err = await pending;
    expect(err).toBeInstanceOf(InDoubtError);
    expect((err as InDoubtError).code).toBe('ABORTED');
    expect(signalRead).toBe(false);
    // The call ended: it no longer listens.
    expect(listener).toBeUndefined();
  });

  it('never sends when `cancel` says the caller already cancelled', async () => {
    const cancelled: CallContext = {
      timeoutMs: 5_000,
      signal: new AbortController().signal,
      cancel: { cancelled: () => new Error('lease lost'), onCancel: () => undefined, offCancel: () => undefined },
    };
    const err = await caught(provider.send(request(), cancelled));
    expect(err).toBeInstanceOf(RetryableError);
    expect((err as RetryableError).safeToFallback).toBe(true);
    expect(sink.requests).toHaveLength(0);
  });

  it('answers lookup 404 for a key it never saw, and does not record a send', async () => {
    expect(await provider.lookup?.('never-sent-key', ctx())).toEqual({ found: false });
    expect(sink.lookups).toEqual([{ key: 'never-sent-key', found: false }]);
    expect(sink.requests).toHaveLength(0);
  });

  it('gets ECONNREFUSED from a stopped sink, then sends once it is up again', async () => {
    // A fresh provider: no idle keep-alive socket from earlier tests can be picked for the first send.
    const fresh = new HttpProvider({ name: 'fresh', type: 'http', url: sink.url });
    try {
      await sink.down();
      try {
        const err = await caught(fresh.send(request(), ctx()));
        expect(err).toBeInstanceOf(RetryableError);
        expect((err as RetryableError).safeToFallback).toBe(true);
        expect((err as RetryableError).code).toBe('ECONNREFUSED');
      } finally {
        await sink.up();
      }
      const req = request();
      const result = await fresh.send(req, ctx());
      expect(result.externalId).toBe(sink.accepted.get(req.operationKey)?.id);
    } finally {
      await fresh.close();
    }
  });

  it('refuses to send after close()', async () => {
    const closing = new HttpProvider({ name: 'closing', type: 'http', url: sink.url });
    await closing.close();
    const err = await caught(closing.send(request(), ctx()));
    expect(err).toBeInstanceOf(RetryableError);
    expect((err as RetryableError).code).toBe('PROVIDER_CLOSED');
    expect(sink.requests).toHaveLength(0);
  });
});

describe('HttpProvider without a listener or lookup', () => {
  it('maps connection refused (closed port) to RetryableError, safe to fall back', async () => {
    const port = await freePort();
    const provider = createProvider({ name: 'down', type: 'http', url: `http://127.0.0.1:${port}/send` });
    try {
      const err = await caught(provider.send(request(), ctx()));
      expect(err).toBeInstanceOf(RetryableError);
      expect((err as RetryableError).safeToFallback).toBe(true);
      expect((err as RetryableError).code).toBe('ECONNREFUSED');
      expect(provider.lookup).toBeUndefined();
    } finally {
      await provider.close();
    }
  });

  it('rejects a config that can never work', () => {
    expect(() => createProvider({ name: 'x', type: 'http', url: 'ftp://127.0.0.1/send' })).toThrow(ValidationError);
    expect(() => createProvider({ name: 'x', type: 'http', url: 'not a url' })).toThrow(ValidationError);
  });
});

describe('HttpProvider lookup never guesses', () => {
  let server: Server;
  let base: string;
  const answers = new Map<string, { status: number; body: string }>();

  beforeAll(async () => {
    server = createServer((req, res) => {
      const key = decodeURIComponent((req.url ?? '').split('/').pop() ?? '');
      const answer = answers.get(key) ?? { status: 404, body: '' };
      res.writeHead(answer.status, { 'content-type': 'application/json', 'retry-after': '3' });
      res.end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/lookup/`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it.each([
    ['500', { status: 500, body: '{}' }, 'LOOKUP_HTTP_500'],
    ['200 without an id', { status: 200, body: '{"status":"queued"}' }, 'LOOKUP_NO_ID'],
    ['400', { status: 400, body: '' }, 'LOOKUP_HTTP_400'],
  ])('throws RetryableError on %s', async (_label, answer, code) => {
    const key = `key-${code}`;
    answers.set(key, answer);
    const provider = new HttpProvider({ name: 'p', type: 'http', url: `${base}send`, lookupUrl: base });
    try {
      const err = await caught(provider.lookup?.(key, ctx()) ?? Promise.resolve());
      expect(err).toBeInstanceOf(RetryableError);
      expect((err as RetryableError).code).toBe(code);
    } finally {
      await provider.close();
    }
  });

  it('finds a key under a lookupUrl with a trailing slash', async () => {
    answers.set('k-found', { status: 200, body: '{"id":"prov-77"}' });
    const provider = new HttpProvider({ name: 'p', type: 'http', url: `${base}send`, lookupUrl: base });
    try {
      expect(await provider.lookup?.('k-found', ctx())).toEqual({ found: true, externalId: 'prov-77' });
    } finally {
      await provider.close();
    }
  });

  it('throws RetryableError when the lookup endpoint is unreachable', async () => {
    const port = await freePort();
    const provider = new HttpProvider({
      name: 'p',
      type: 'http',
      url: `http://127.0.0.1:${port}/send`,
      lookupUrl: `http://127.0.0.1:${port}/messages`,
    });
    try {
      const err = await caught(provider.lookup?.('k', ctx()) ?? Promise.resolve());
      expect(err).toBeInstanceOf(RetryableError);
      expect((err as RetryableError).code).toBe('LOOKUP_ECONNREFUSED');
    } finally {
      await provider.close();
    }
  });
});
