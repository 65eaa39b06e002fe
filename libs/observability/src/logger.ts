import { hostname } from 'node:os';
import pino from 'pino';
import { NO_TRACE_FIELDS, logTraceFields } from '@singleshot/tracing';
import { chooseLogFormat, logTransport } from './log-format';

/** pino's logger. Callers derive per-job loggers with `logger.child({ operationKey, messageKey, jobId, attempt })`. */
export type Logger = pino.Logger;

export const REDACTED = '[redacted]';

/** Keys whose values are credentials wherever they appear (up to a few levels deep). */
const SECRET_KEYS = [
  'password',
  'secret',
  'token',
  'authorization',
  'Authorization',
  'cookie',
  'signature',
  'signingSecrets',
  'signingKey',
  'apiKey',
];

/**
 * Redaction paths. The redactor has no recursive wildcard, so each key is
 * listed at the top level and under one to three wildcard levels; deeper
 * structures (a whole config) must go through redactConfig before logging.
 * Headers get explicit paths because their names carry dashes.
 */
export const REDACT_PATHS: readonly string[] = [
  ...SECRET_KEYS.flatMap((key) => [key, `*.${key}`, `*.*.${key}`, `*.*.*.${key}`]),
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-singleshot-signature"]',
  'headers["x-singleshot-signature"]',
  '*.headers["x-singleshot-signature"]',
  'headers["x-api-key"]',
  '*.headers["x-api-key"]',
];

export interface CreateLoggerOptions {
  /** Name of the app (`ingest`, `delivery`, …), on every line as `app`. */
  app: string;
  /** pino level; default `info`. */
  level?: string;
  /** Where lines go; default stdout. Tests pass a stream to read them back. */
  destination?: pino.DestinationStream;
}

/** Not part of the lines: how a person at a terminal reads them (log-format.ts). */
function stdoutTransport(): pino.DestinationStream | undefined {
  const transport = logTransport(chooseLogFormat({ isTTY: process.stdout.isTTY, setting: process.env.LOG_FORMAT }));
  return transport ? pino.transport(transport) : undefined;
}

/**
 * A JSON logger: one line per entry with `app`, `pid` and `hostname` (several
 * replicas of one app share a host and a log pipeline), an ISO `time`, the
 * level as a word, `trace_id`/`span_id` while a span is active, and secrets replaced by `"[redacted]"`. On a terminal
 * (stdout a TTY) the same entries go through pino-pretty instead;
 * `LOG_FORMAT=json` forces JSON there too, `LOG_FORMAT=pretty` forces pretty.
 */
export function createLogger(options: CreateLoggerOptions): Logger {
  const config: pino.LoggerOptions = {
    level: options.level ?? 'info',
    base: { app: options.app, pid: process.pid, hostname: hostname() },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: [...REDACT_PATHS], censor: REDACTED },
    // `trace_id` and `span_id` of the active span when tracing is on; one check and a shared empty object when off.
    mixin: logTraceFields,
    // pino's default merge writes the line's fields into the mixin's object: the shared empty one must stay untouched.
    mixinMergeStrategy: (mergeObject, mixinObject) => (mixinObject === NO_TRACE_FIELDS ? mergeObject : Object.assign(mixinObject, mergeObject)),
  };
  const destination = options.destination ?? stdoutTransport();
  return destination ? pino(config, destination) : pino(config);
}

/** The logging methods code about one operation uses. */
export type ScopedLogger = Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;

/**
 * A child logger made only when a line is actually written at an enabled
 * level. Delivery scopes a logger to every claimed operation; building a pino
 * child (bindings serialized, redaction set up) for each one was a measurable
 * share of a delivery's CPU although most attempts log nothing at `info`.
 */
export function lazyChild(parent: Logger, bindings: Record<string, unknown>): ScopedLogger {
  return new LazyChild(parent, bindings) as unknown as ScopedLogger;
}

/** One object per scope, its methods on the prototype: no closures per claimed operation. */
class LazyChild {
  private child: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Record<string, unknown>,
  ) {}

  debug(obj: unknown, msg?: string): void {
    this.write('debug', obj, msg);
  }

  info(obj: unknown, msg?: string): void {
    this.write('info', obj, msg);
  }

  warn(obj: unknown, msg?: string): void {
    this.write('warn', obj, msg);
  }

  error(obj: unknown, msg?: string): void {
    this.write('error', obj, msg);
  }

  private write(level: 'debug' | 'info' | 'warn' | 'error', obj: unknown, msg: string | undefined): void {
    if (!this.parent.isLevelEnabled(level)) return;
    this.child ??= this.parent.child(this.bindings);
    this.child[level](obj as object, msg);
  }
}

/**
 * Ends the logger's stream and calls `done` once every line written so far has
 * been handed to the OS. pino writes asynchronously, and its `flush` does not
 * wait for a write already given to the thread pool: a process that exits right
 * after its last line can lose it. Ending the stream waits for that write (the
 * stdout stream leaves fd 1 open, then says `close`). For the last words of an
 * exiting process only: nothing is written after it.
 */
export function endLogs(logger: Logger, done: () => void): void {
  const stream = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] as Partial<NodeJS.WritableStream> | undefined;
  if (!stream || typeof stream.end !== 'function' || typeof stream.once !== 'function') return done();
  stream.once('close', done);
  stream.once('error', done);
  try {
    stream.end();
  } catch {
    // already ended: nothing left to wait for
    done();
  }
}
