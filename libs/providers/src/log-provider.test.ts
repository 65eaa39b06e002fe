import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RetryableError } from '@singleshot/core';
import { createProvider } from './create-provider';
import { LogProvider, type LogLine } from './log-provider';
import type { CallContext, SendRequest } from './provider';

const ctx = (timeoutMs = 5_000, signal = new AbortController().signal): CallContext => ({ signal, timeoutMs });

function request(n: number): SendRequest {
  return {
    operationKey: `op-${n}`,
    messageKey: `msg-${n}`,
    recipient: `r${n}@example.test`,
    channel: 'audit',
    subject: `Subject ${n}`,
    text: `Line one\nline "two" ${n}`,
    data: { secret: 'not logged' },
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

describe('LogProvider', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'singleshot-log-provider-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('appends one NDJSON line per send, creating parent directories', async () => {
    const path = join(dir, 'nested', 'deeper', 'sent.ndjson');
    const provider = createProvider({ name: 'log', type: 'log', path });
    const results = await Promise.all([1, 2, 3].map((n) => provider.send(request(n), ctx())));
    expect(results.map((r) => r.externalId).sort()).toEqual(['log:op-1', 'log:op-2', 'log:op-3']);

    const lines = (await readFile(path, 'utf8')).split('\n');
    expect(lines.pop()).toBe('');
    const parsed = lines.map((l) => JSON.parse(l) as LogLine).sort((a, b) => a.operationKey.localeCompare(b.operationKey));
    expect(parsed).toHaveLength(3);
    const { ts, ...rest } = parsed[1] as LogLine;
    expect(Number.isNaN(Date.parse(ts))).toBe(false);
    expect(rest).toEqual({
      operationKey: 'op-2',
      messageKey: 'msg-2',
      recipient: 'r2@example.test',
      channel: 'audit',
      subject: 'Subject 2',
      text: 'Line one\nline "two" 2',
    });
    expect(provider.lookup).toBeUndefined();
    await provider.close();
  });

  it('maps a path it cannot open to RetryableError, safe to fall back', async () => {
    const provider = new LogProvider({ name: 'log', type: 'log', path: dir }); // a directory
    const err = await caught(provider.send(request(9), ctx()));
    expect(err).toBeInstanceOf(RetryableError);
    expect((err as RetryableError).code).toBe('EISDIR');
    expect((err as RetryableError).safeToFallback).toBe(true);
  });

  it('does not write when the call was already aborted', async () => {
    const path = join(dir, 'aborted.ndjson');
    const provider = new LogProvider({ name: 'log', type: 'log', path });
    const controller = new AbortController();
    controller.abort();
    const err = await caught(provider.send(request(1), ctx(5_000, controller.signal)));
    expect(err).toBeInstanceOf(RetryableError);
    await expect(readFile(path, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
