import { describe, expect, it, vi } from 'vitest';
import { chaosSeed } from './seed';

describe('chaosSeed', () => {
  it('takes CHAOS_SEED when set, so a failing run can be rerun', () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    expect(chaosSeed('bounded', { CHAOS_SEED: '4242' }, () => 0.5)).toBe('4242');
    expect(log).toHaveBeenCalledWith(expect.stringContaining('CHAOS_SEED=4242'));
    log.mockRestore();
  });

  it('draws a new seed otherwise, and prints it', () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const draws = [0.1, 0.7];
    const seeds = [chaosSeed('a', {}, () => draws[0] as number), chaosSeed('b', {}, () => draws[1] as number)];
    expect(seeds).toEqual(['100000000', '700000000']);
    expect(log).toHaveBeenCalledWith(expect.stringContaining('seed 700000000'));
    log.mockRestore();
  });
});
