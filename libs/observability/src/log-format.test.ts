import { describe, expect, it } from 'vitest';
import { chooseLogFormat, LogFormatError, logTransport } from './log-format';

describe('log format', () => {
  it('is pretty on a terminal and JSON anywhere else', () => {
    expect(chooseLogFormat({ isTTY: true, setting: undefined })).toBe('pretty');
    expect(chooseLogFormat({ isTTY: false, setting: undefined })).toBe('json');
    // A pipe or a file: Node leaves isTTY undefined.
    expect(chooseLogFormat({ isTTY: undefined, setting: undefined })).toBe('json');
    expect(chooseLogFormat({ isTTY: true, setting: 'auto' })).toBe('pretty');
    expect(chooseLogFormat({ isTTY: true, setting: '' })).toBe('pretty');
  });

  it('LOG_FORMAT forces either, and refuses anything else with a code', () => {
    expect(chooseLogFormat({ isTTY: true, setting: 'json' })).toBe('json');
    expect(chooseLogFormat({ isTTY: false, setting: 'pretty' })).toBe('pretty');
    expect(() => chooseLogFormat({ isTTY: true, setting: 'yaml' })).toThrow(LogFormatError);
    expect(() => chooseLogFormat({ isTTY: true, setting: 'yaml' })).toThrow(expect.objectContaining({ code: 'LOG_FORMAT_INVALID' }));
  });

  it("pretty goes through pino's pino-pretty transport to stdout, JSON through none", () => {
    expect(logTransport('json')).toBeUndefined();
    expect(logTransport('pretty')).toMatchObject({ target: 'pino-pretty', options: { colorize: true, destination: 1 } });
    // The transport target is a package pino's worker can load.
    expect(() => require.resolve('pino-pretty')).not.toThrow();
  });
});
