import { describe, expect, it } from 'vitest';
import { appGroups } from './supervise';
import { availableParallelism } from 'node:os';
import { defaultProcesses, parseProcesses } from './commands/start';

describe('singleshot start --processes', () => {
  it('splits the apps into ingest | workers, or ingest | decision | delivery', () => {
    const all = ['ingest', 'decision', 'render', 'delivery', 'dashboard'] as const;
    expect(appGroups(all, 1)).toEqual([['ingest', 'dashboard', 'decision', 'render', 'delivery']]);
    expect(appGroups(all, 2)).toEqual([['ingest', 'dashboard'], ['decision', 'render', 'delivery']]);
    expect(appGroups(all, 3)).toEqual([['ingest', 'dashboard'], ['decision', 'render'], ['delivery']]);
    expect(appGroups(all, 8)).toEqual([['ingest', 'dashboard'], ['decision', 'render'], ['delivery']]);
  });

  it('keeps only the apps asked for (--only), dropping empty groups', () => {
    expect(appGroups(['ingest', 'delivery'], 3)).toEqual([['ingest'], ['delivery']]);
    expect(appGroups(['delivery'], 3)).toEqual([['delivery']]);
  });

  it('takes a positive integer and refuses anything else', () => {
    expect(parseProcesses('2')).toBe(2);
    expect(() => parseProcesses('0')).toThrow(/--processes/);
    expect(() => parseProcesses('two')).toThrow(/--processes/);
    expect(parseProcesses(undefined)).toBe(defaultProcesses(availableParallelism()));
  });

  it('runs one app process per core by default, at most 3', () => {
    expect(defaultProcesses(1)).toBe(1);
    // Two cores: ingest | workers, not three processes on two cores.
    expect(defaultProcesses(2)).toBe(2);
    expect(defaultProcesses(3)).toBe(3);
    expect(defaultProcesses(64)).toBe(3);
  });
});
