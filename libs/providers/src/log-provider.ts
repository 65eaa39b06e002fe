import { appendFile, mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { RetryableError } from '@singleshot/core';
import { classifyLogError, errorCode, errorFor } from './classify';
import { resolveOptions } from './provider-options';
import type { CallContext, LogProviderOptions, Provider, SendRequest, SendResult } from './provider';

/** One line of the log provider's file. */
export interface LogLine {
  ts: string;
  operationKey: string;
  messageKey: string;
  recipient: string;
  channel: string;
  subject: string;
  text: string;
}

/**
 * `type: log`: appends one NDJSON line per send, written with a single
 * `appendFile` (O_APPEND), so concurrent senders and processes on one local
 * file system never interleave within a line.
 *
 * No `lookup`: answering "do you have this key?" means scanning a file that
 * only grows, on every reconcile; and the file is a development sink, not a
 * provider anyone relies on for idempotency. An in-doubt log write (a failure
 * after the file was opened, e.g. ENOSPC) therefore cannot be reconciled here.
 */
export class LogProvider implements Provider {
  readonly type = 'log' as const;
  readonly name: string;
  readonly path: string;
  private dirReady: Promise<unknown> | undefined;
  private closed = false;

  constructor(input: LogProviderOptions) {
    const options = resolveOptions(input);
    this.name = options.name;
    this.path = resolve(options.path);
  }

  async send(req: SendRequest, ctx: CallContext): Promise<SendResult> {
    if (this.closed) {
      throw new RetryableError(`${this.name}: provider is closed`, 'PROVIDER_CLOSED', { safeToFallback: true });
    }
    if (ctx.signal.aborted || !(ctx.timeoutMs > 0) || (ctx.endsAt !== undefined && ctx.endsAt <= Date.now())) {
      throw new RetryableError(`${this.name}: call ended before the write`, ctx.signal.aborted ? 'ABORTED' : 'DEADLINE', {
        safeToFallback: true,
      });
    }
    const line: LogLine = {
      ts: new Date().toISOString(),
      operationKey: req.operationKey,
      messageKey: req.messageKey,
      recipient: req.recipient,
      channel: req.channel,
      subject: req.subject,
      text: req.text,
    };
    try {
      this.dirReady ??= mkdir(dirname(this.path), { recursive: true });
      await this.dirReady;
      await appendFile(this.path, `${JSON.stringify(line)}\n`, 'utf8');
    } catch (err) {
      // The directory may have been removed since (log rotation, tmp cleanup): create it next time.
      this.dirReady = undefined;
      const code = errorCode(err) ?? 'UNKNOWN';
      throw errorFor(classifyLogError(code), `${this.name}: cannot append to ${this.path} (${code})`, code, { cause: err });
    }
    return { externalId: `log:${req.operationKey}`, detail: this.path };
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
