import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InDoubtError, PermanentError, RetryableError, ValidationError } from '@singleshot/core';
import { startSmtpSink, type SmtpSink, freePort } from '@singleshot/test-harness';
import { createProvider } from './create-provider';
import { OPERATION_HEADER, SmtpProvider } from './smtp-provider';
import type { CallContext, Provider, SendRequest, SmtpProviderOptions } from './provider';

const ctx = (timeoutMs = 5_000, signal = new AbortController().signal): CallContext => ({ signal, timeoutMs });

let seq = 0;
function request(overrides: Partial<SendRequest> = {}): SendRequest {
  seq += 1;
  return {
    operationKey: `0f${seq}e4c1a9b7`,
    messageKey: `msg-${seq}`,
    recipient: `owner${seq}@example.test`,
    channel: 'email',
    subject: `New mail ${seq}`,
    text: `From someone: hello ${seq}`,
    data: {},
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

describe('SmtpProvider against a real smtp-server sink', () => {
  let sink: SmtpSink;
  let provider: Provider;
  const options = (overrides: Partial<SmtpProviderOptions> = {}): SmtpProviderOptions => ({
    name: 'relay',
    type: 'smtp',
    host: '127.0.0.1',
    port: sink.port,
    secure: false,
    from: 'Singleshot <singleshot@Example.Test>',
    timeoutMs: 5_000,
    ...overrides,
  });

  beforeAll(async () => {
    sink = await startSmtpSink();
    provider = createProvider(options());
  });
  afterEach(() => sink.reset());
  afterAll(async () => {
    await provider.close();
    await sink.close();
  });

  it('sends with Message-ID <operationKey@domain-of-from> and the operation header', async () => {
    const req = request();
    const result = await provider.send(req, ctx());

    expect(sink.messages).toHaveLength(1);
    const message = sink.messages[0];
    expect(message?.messageId).toBe(`<${req.operationKey}@example.test>`);
    expect(message?.headers.get(OPERATION_HEADER.toLowerCase())).toEqual([req.operationKey]);
    expect(message?.envelope).toEqual({ from: 'singleshot@Example.Test', to: [req.recipient] });
    expect(message?.subject).toBe(req.subject);
    expect(message?.raw).toContain(req.text);
    expect(message?.outcome).toBe('accepted');
    expect(result.externalId).toBe(`<${req.operationKey}@example.test> 250 OK: queued as sink-1`);
  });

  it('gives a resent copy the same Message-ID', async () => {
    const req = request();
    await provider.send(req, ctx());
    await provider.send(req, ctx());
    expect(sink.messages.map((m) => m.messageId)).toEqual([
      `<${req.operationKey}@example.test>`,
      `<${req.operationKey}@example.test>`,
    ]);
  });

  it('uses messageIdDomain when configured', async () => {
    const custom = new SmtpProvider(options({ messageIdDomain: 'ids.example.org' }));
    try {
      const req = request();
      await custom.send(req, ctx());
      expect(sink.messages[0]?.messageId).toBe(`<${req.operationKey}@ids.example.org>`);
    } finally {
      await custom.close();
    }
  });

  it('maps a 550 recipient rejection to PermanentError', async () => {
    const req = request();
    sink.scriptFor(req.recipient, { reject: 'rcpt', code: 550, message: 'No such user' });
    const err = await caught(provider.send(req, ctx()));
    expect(err).toBeInstanceOf(PermanentError);
    expect((err as PermanentError).code).toBe('SMTP_550');
    expect(sink.rejections).toEqual([{ stage: 'rcpt', address: req.recipient, code: 550 }]);
    expect(sink.messages).toHaveLength(0);
  });

  it('maps a 451 recipient deferral to RetryableError, safe to fall back (no content was sent)', async () => {
    sink.script({ reject: 'rcpt', code: 451 });
    const err = await caught(provider.send(request(), ctx()));
    expect(err).toBeInstanceOf(RetryableError);
    expect((err as RetryableError).code).toBe('SMTP_451');
    expect((err as RetryableError).safeToFallback).toBe(true);
  });

  it('maps 451 after the final dot to RetryableError, not safe to fall back', async () => {
    sink.script({ reject: 'data', code: 451 });
    const err = await caught(provider.send(request(), ctx()));
    expect(err).toBeInstanceOf(RetryableError);
    expect((err as RetryableError).code).toBe('SMTP_451');
    expect((err as RetryableError).safeToFallback).toBe(false);
    expect(sink.messages[0]?.outcome).toBe('rejected');
  });

  it.each([
    [{ reject: 'data' as const, code: 554 }, PermanentError],
    [{ reject: 'data' as const, code: 550 }, PermanentError],
    [{ reject: 'rcpt' as const, code: 552 }, RetryableError],
    [{ reject: 'rcpt' as const, code: 503 }, RetryableError],
  ])('maps %o per the reply table', async (behaviour, expected) => {
    sink.script(behaviour);
    const err = await caught(provider.send(request(), ctx()));
    expect(err).toBeInstanceOf(expected);
    expect((err as RetryableError).code).toBe(`SMTP_${behaviour.code}`);
  });

  it('reports a connection cut after the message was taken as in doubt', async () => {
    const req = request();
    sink.script('accept-then-drop');
    const err = await caught(provider.send(req, ctx()));
    expect(err).toBeInstanceOf(InDoubtError);
    expect(sink.taken().map((m) => m.messageId)).toEqual([`<${req.operationKey}@example.test>`]);
  });

  it('reports the deadline passing after the content was sent as in doubt (code DEADLINE)', async () => {
    sink.script('hang');
    const err = await caught(provider.send(request(), ctx(400)));
    expect(err).toBeInstanceOf(InDoubtError);
    expect((err as InDoubtError).code).toBe('DEADLINE');
    expect(sink.messages[0]?.outcome).toBe('hung');
  });

  it('never connects when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const err = await caught(provider.send(request(), ctx(5_000, controller.signal)));
    expect(err).toBeInstanceOf(RetryableError);
    expect((err as RetryableError).safeToFallback).toBe(true);
    expect(sink.messages).toHaveLength(0);
  });

  it('refuses to send after close()', async () => {
    const closing = new SmtpProvider(options());
    await closing.close();
    const err = await caught(closing.send(request(), ctx()));
    expect(err).toBeInstanceOf(RetryableError);
    expect((err as RetryableError).code).toBe('PROVIDER_CLOSED');
  });

  it('has no lookup (plain SMTP cannot be asked)', () => {
    expect(provider.lookup).toBeUndefined();
  });
});

describe('SmtpProvider connection and auth failures', () => {
  it('maps a refused port to RetryableError, safe to fall back', async () => {
    const port = await freePort();
    const provider = new SmtpProvider({
      name: 'down',
      type: 'smtp',
      host: '127.0.0.1',
      port,
      secure: false,
      from: 'singleshot@example.test',
    });
    try {
      const err = await caught(provider.send(request(), ctx()));
      expect(err).toBeInstanceOf(RetryableError);
      expect((err as RetryableError).safeToFallback).toBe(true);
      expect((err as RetryableError).code).toBe('ECONNREFUSED');
    } finally {
      await provider.close();
    }
  });

  it('maps rejected credentials (535) to PermanentError and sends with the right ones', async () => {
    const sink = await startSmtpSink({ auth: { user: 'relay-user', password: 'right' } });
    const base = {
      type: 'smtp' as const,
      host: '127.0.0.1',
      port: sink.port,
      secure: false,
      from: 'singleshot@example.test',
      user: 'relay-user',
    };
    const wrong = new SmtpProvider({ ...base, name: 'wrong', password: 'wrong' });
    const right = new SmtpProvider({ ...base, name: 'right', password: 'right' });
    try {
      const err = await caught(wrong.send(request(), ctx()));
      expect(err).toBeInstanceOf(PermanentError);
      expect((err as PermanentError).code).toBe('SMTP_535');
      expect(sink.messages).toHaveLength(0);

      const req = request();
      await right.send(req, ctx());
      expect(sink.messages.map((m) => m.messageId)).toEqual([`<${req.operationKey}@example.test>`]);
    } finally {
      await wrong.close();
      await right.close();
      await sink.close();
    }
  });

  it('rejects a from without an address', () => {
    expect(
      () => new SmtpProvider({ name: 'x', type: 'smtp', host: '127.0.0.1', port: 25, secure: false, from: 'nobody' }),
    ).toThrow(ValidationError);
  });
});
