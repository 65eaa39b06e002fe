import type pino from 'pino';
import { z } from 'zod';

/** `json`: one JSON object per line (log pipelines); `pretty`: pino-pretty's coloured lines (a person at a terminal). */
export type LogFormat = 'json' | 'pretty';

/** `LOG_FORMAT`: `json` or `pretty` forces a format; unset or `auto` picks by the terminal. */
const logFormatSetting = z.enum(['json', 'pretty', 'auto']).default('auto');

/** `LOG_FORMAT` holds something else; `code` is stable for callers. */
export class LogFormatError extends Error {
  readonly code = 'LOG_FORMAT_INVALID';
  constructor(value: string) {
    super(`LOG_FORMAT must be json, pretty or auto, got "${value}"`);
    this.name = 'LogFormatError';
  }
}

/**
 * The log format for a process: pretty when stdout is a terminal (someone is
 * reading it), JSON otherwise (a file, a pipe, a container's log driver), and
 * whatever `LOG_FORMAT` forces. Throws LogFormatError on an unknown setting.
 */
export function chooseLogFormat(input: { isTTY: boolean | undefined; setting: string | undefined }): LogFormat {
  const parsed = logFormatSetting.safeParse(input.setting?.trim() || undefined);
  if (!parsed.success) throw new LogFormatError(input.setting ?? '');
  if (parsed.data !== 'auto') return parsed.data;
  return input.isTTY === true ? 'pretty' : 'json';
}

/**
 * pino's transport for a format: pino-pretty (in pino's worker thread, so
 * formatting never runs on the app's event loop) for `pretty`, none (plain
 * JSON to stdout) for `json`.
 */
export function logTransport(format: LogFormat): pino.TransportSingleOptions | undefined {
  if (format === 'json') return undefined;
  return {
    target: 'pino-pretty',
    // `[12:00:00.000] INFO: ingest: listening`, the other fields indented below.
    options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,app', messageFormat: '{app}: {msg}', destination: 1 },
  };
}
