import { describe, expect, it } from 'vitest';
import { appGroups } from './supervise';
import { parseProcesses } from './commands/start';

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
    expect(parseProcesses(undefined)).toBeGreaterThanOrEqual(1);
  });
});
