import { describe, expect, it } from 'vitest';
import { RefusalBackoff, refusalCode } from './refusal-backoff';

/** An error shaped as ioredis's reply errors are (name `ReplyError`, the reply's text as message). */
function reply(message: string, previousErrors?: Error[]): Error {
  const err = new Error(message);
  err.name = 'ReplyError';
  if (previousErrors) Object.assign(err, { previousErrors });
  return err;
}

describe('refusalCode', () => {
  it('reads the reply code word, and nothing else', () => {
    expect(refusalCode(reply("OOM command not allowed when used memory > 'maxmemory'."))).toBe('OOM');
    expect(refusalCode(reply('MISCONF Errors writing to the AOF file: No space left on device'))).toBe('MISCONF');
    expect(refusalCode(reply("READONLY You can't write against a read only replica. script: abc"))).toBe('READONLY');
    expect(refusalCode(reply('LOADING Redis is loading the dataset in memory'))).toBe('LOADING');
    expect(refusalCode(reply('TRYAGAIN Multiple keys request during rehashing of slot'))).toBe('TRYAGAIN');
    // Free text that mentions a code is not a code.
    expect(refusalCode(reply('ERR something about OOM and READONLY'))).toBeUndefined();
    expect(refusalCode(reply('NOSCRIPT No matching script'))).toBeUndefined();
    // Not a reply from Redis: a connection error or our own error is never a refusal.
    expect(refusalCode(new Error('OOM command not allowed'))).toBeUndefined();
    expect(refusalCode('OOM')).toBeUndefined();
  });

  it('takes the code of a refused MULTI from its first queued error', () => {
    expect(refusalCode(reply('EXECABORT Transaction discarded because of previous errors.', [reply('OOM command not allowed')]))).toBe('OOM');
    expect(refusalCode(reply('EXECABORT Transaction discarded because of previous errors.', [reply('ERR wrong number of arguments')]))).toBeUndefined();
  });
});

describe('RefusalBackoff', () => {
  const make = () => {
    let now = 1_000_000;
    const backoff = new RefusalBackoff({ baseMs: 100, capMs: 1_600, now: () => now, random: () => 1 });
    return { backoff, advance: (ms: number) => (now += ms) };
  };

  it('grows exponentially up to its cap, one step per wait however many loops meet the refusal', () => {
    const { backoff, advance } = make();
    const waits: number[] = [];
    for (let i = 0; i < 7; i++) {
      const wait = backoff.refused('OOM');
      // Other loops meeting the refusal during this wait do not grow it.
      expect(backoff.refused('OOM')).toBe(wait);
      waits.push(wait);
      advance(wait);
    }
    expect(waits).toEqual([100, 200, 400, 800, 1_600, 1_600, 1_600]);
    expect(backoff.refusing()).toBe('OOM');
    expect(backoff.backoffSeconds()).toBe(1.6);
  });

  it('jitters each wait between half and all of its step', () => {
    let now = 0;
    const low = new RefusalBackoff({ baseMs: 100, capMs: 1_600, now: () => now, random: () => 0 });
    expect(low.refused('OOM')).toBe(50);
    now += 50;
    expect(low.refused('OOM')).toBe(100);
  });

  it('ends at the first success, and forgets a refusal no loop met again', () => {
    const { backoff, advance } = make();
    backoff.refused('MISCONF');
    expect(backoff.inBackoff()).toBe(true);
    backoff.succeeded();
    expect(backoff.inBackoff()).toBe(false);
    expect(backoff.refusing()).toBeUndefined();
    expect(backoff.backoffSeconds()).toBe(0);
    expect(backoff.refused('READONLY')).toBe(100);
    advance(2 * 1_600);
    expect(backoff.refusing()).toBeUndefined();
  });
});
