import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createLogger, endLogs, lazyChild } from './index';
import { installTracing, type TracingImpl } from '@singleshot/tracing';

function capture(): { stream: Writable; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  const lines = () =>
    chunks
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { stream, lines };
}

describe('createLogger', () => {
  it('writes JSON lines with app, ISO time and level', () => {
    const out = capture();
    const logger = createLogger({ app: 'delivery', destination: out.stream });
    logger.info({ jobId: 'j1' }, 'hello');
    logger.debug('hidden below info');
    const [line, ...rest] = out.lines();
    expect(rest).toHaveLength(0);
    expect(line).toMatchObject({ app: 'delivery', level: 'info', msg: 'hello', jobId: 'j1', pid: process.pid });
    expect(new Date(line?.time as string).toISOString()).toBe(line?.time);
  });

  it('honours the level', () => {
    const out = capture();
    const logger = createLogger({ app: 'x', level: 'warn', destination: out.stream });
    logger.info('no');
    logger.warn('yes');
    expect(out.lines().map((l) => l.msg)).toEqual(['yes']);
  });

  it('redacts secrets at any of the usual places and keeps everything else', () => {
    const out = capture();
    const logger = createLogger({ app: 'ingest', destination: out.stream });
    const child = logger.child({ operationKey: 'op-1', messageKey: 'msg-1', jobId: 'job-1', attempt: 2 });
    child.info(
      {
        password: 'S1-top',
        imap: { user: 'support', password: 'S2-imap' },
        provider: { smtp: { password: 'S3-deep', host: 'relay' } },
        ingest: { signingSecrets: ['S4-a', 'S4-b'] },
        auth: { token: 'S5-token', secret: 'S6-secret' },
        http: { apiKey: 'S7-key', signature: 'S8-sig' },
        req: {
          method: 'POST',
          url: '/v1/events',
          headers: { authorization: 'Bearer S9-bearer', 'x-singleshot-signature': 'sha256=S10', 'content-type': 'application/json' },
        },
        request: { headers: { Authorization: 'Basic S11' } },
      },
      'received',
    );
    const [line] = out.lines();
    const text = JSON.stringify(line);
    for (let i = 1; i <= 11; i++) expect(text).not.toMatch(new RegExp(`S${i}\\b`));
    expect(line).toMatchObject({
      app: 'ingest',
      msg: 'received',
      operationKey: 'op-1',
      messageKey: 'msg-1',
      jobId: 'job-1',
      attempt: 2,
      password: '[redacted]',
      imap: { user: 'support', password: '[redacted]' },
      provider: { smtp: { password: '[redacted]', host: 'relay' } },
      ingest: { signingSecrets: '[redacted]' },
      req: {
        method: 'POST',
        url: '/v1/events',
        headers: { authorization: '[redacted]', 'x-singleshot-signature': '[redacted]', 'content-type': 'application/json' },
      },
      request: { headers: { Authorization: '[redacted]' } },
    });
  });
});

describe('lazyChild', () => {
  it('writes with the bindings, redacted, only at enabled levels, and builds the child only then', () => {
    const out = capture();
    const logger = createLogger({ app: 'delivery', level: 'info', destination: out.stream });
    let children = 0;
    const child = logger.child.bind(logger);
    logger.child = ((...args: Parameters<typeof logger.child>) => {
      children++;
      return child(...args);
    }) as typeof logger.child;
    const scoped = lazyChild(logger, { operationKey: 'op-1', password: 'hunter2' });
    scoped.debug({ step: 'skipped' }, 'not written at info');
    expect(children).toBe(0);
    scoped.info({ step: 'sent' }, 'written');
    scoped.warn({ step: 'again' }, 'written too');
    expect(children).toBe(1);
    const lines = out.lines();
    expect(lines.map((l) => l.msg)).toEqual(['written', 'written too']);
    expect(lines[0]).toMatchObject({ operationKey: 'op-1', step: 'sent', password: '[redacted]' });
  });
});

describe('trace fields on log lines', () => {
  it('has none with tracing off, and one line’s fields never reach the next', () => {
    const out = capture();
    const logger = createLogger({ app: 'delivery', destination: out.stream });
    logger.info({ event: 'first', operationKey: 'k1' }, 'one');
    logger.info({ event: 'second' }, 'two');
    const [first, second] = out.lines();
    expect(first).not.toHaveProperty('trace_id');
    expect(second).toMatchObject({ event: 'second' });
    expect(second).not.toHaveProperty('operationKey');
  });

  it('carries trace_id and span_id of the active span while tracing is on', () => {
    const ids = { trace_id: '4bf92f3577b34da6a3ce929d0e0e4736', span_id: '00f067aa0ba902b7' };
    // Only what the logger asks of the tracing: the active span's ids (libs/tracing tests the SDK itself).
    const impl: TracingImpl = {
      startSpan: () => {
        throw new Error('not used');
      },
      runIn: (_span, fn) => fn(),
      activeIds: () => ({ ...ids }),
      annotateActive: () => undefined,
      activeTraceparent: () => undefined,
      shutdown: async () => undefined,
    };
    installTracing(impl);
    try {
      const out = capture();
      const logger = createLogger({ app: 'delivery', destination: out.stream });
      logger.warn({ event: 'operation_dead' }, 'dead');
      expect(out.lines()[0]).toMatchObject({ event: 'operation_dead', ...ids });
    } finally {
      installTracing(undefined);
    }
  });
});

describe('endLogs', () => {
  // A process exits right after its last line; pino's asynchronous stream may
  // still hold lines, or have one handed to the thread pool, when that happens.
  it('calls back only once every line written before it has reached the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'singleshot-endlogs-'));
    try {
      const file = join(dir, 'out.log');
      const logger = createLogger({ app: 'delivery', destination: pino.destination({ dest: file, sync: false, mkdir: true }) });
      const padding = 'x'.repeat(200);
      for (let i = 0; i < 5000; i++) logger.info({ event: 'line', i, padding }, 'a line');
      logger.error({ event: 'last_words' }, 'the last line');
      const written = await new Promise<string>((resolve) => endLogs(logger, () => resolve(readFileSync(file, 'utf8'))));
      const lines = written.split('\n').filter(Boolean);
      expect(lines).toHaveLength(5001);
      expect(JSON.parse(lines[5000] as string)).toMatchObject({ event: 'last_words' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
