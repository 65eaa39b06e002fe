import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { cpuBreakdown } from './cpu-profile';
import { monitorRedis } from './redis-monitor';
import { startRedis } from './servers';
import { keepProfileSection, profileSectionOf, withProfileSection } from './profile-round';

// The profile round's arithmetic on a profile written by hand: which samples
// count (inside the measured run, not idle), what a sample is charged to (a
// builtin to its caller, a package by its folder, our bundle through its
// source map), and the stage (a one-app process as a whole, else the app on
// the stack).
describe('cpuBreakdown', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-profile-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  // A bundle whose first line maps to apps/delivery/src/deliver.ts, line 1.
  const bundle = join(dir, 'main.js');
  writeFileSync(bundle, 'x');
  writeFileSync(`${bundle}.map`, JSON.stringify({ version: 3, sources: ['../apps/delivery/src/deliver.ts'], names: [], mappings: 'AAAA' }));
  const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 0, columnNumber: 0 });
  const profile = {
    startTime: 1000,
    nodes: [
      { id: 1, callFrame: frame('(root)', ''), children: [2, 4, 5] },
      { id: 2, callFrame: frame('deliver', pathToFileURL(bundle).href), children: [3] },
      { id: 3, callFrame: frame('stringify', '') },
      { id: 4, callFrame: frame('parseReply', 'file:///repo/node_modules/ioredis/built/DataHandler.js') },
      { id: 5, callFrame: frame('(idle)', '') },
    ],
    // At 1100, 1200, 1300, 1400, 1500, 1600 µs.
    samples: [2, 3, 4, 5, 3, 4],
    timeDeltas: [100, 100, 100, 100, 100, 100],
  };
  // Two processes: one app alone (pid 11), several apps in one (pid 12).
  writeFileSync(join(dir, 'CPU.20261207.104700.11.0.001.cpuprofile'), JSON.stringify(profile));
  writeFileSync(join(dir, 'CPU.20261207.104700.12.0.001.cpuprofile'), JSON.stringify(profile));

  it('counts the run only, charges a builtin to its caller, and finds the stage', () => {
    // The window leaves out the last sample (1600 µs); idle never counts.
    const got = cpuBreakdown(dir, 1, { fromUs: 1050, toUs: 1550, roles: { 11: 'decision', 12: 'singleshot' } });
    // Per process: deliver 100 + stringify 100 + stringify 100 (ours) and ioredis 100, in ms.
    expect(got.byWhat).toEqual({ 'ours: apps/delivery': 0.6, ioredis: 0.2 });
    expect(got.totalMs).toBe(0.8);
    // pid 11 is all `decision`; in pid 12 the ioredis reply has no app above it.
    expect(got.byStage).toEqual({ decision: 0.4, delivery: 0.3, 'no app frame (I/O callbacks, timers)': 0.1 });
    expect(got.topOwn).toEqual({ 'deliver (apps/delivery/src/deliver.ts:1)': 0.6 });
  });
});

describe('the profile section of BENCHMARKS.md', () => {
  it('is added, then replaced with the run before kept below, and survives a regenerated page', () => {
    const first = withProfileSection('# Benchmarks\n\ntables\n', "## Where a notification's work goes\n\nrun A");
    expect(first.startsWith('# Benchmarks\n\ntables\n')).toBe(true);
    expect(profileSectionOf(first)).toContain('run A');
    const second = withProfileSection(first, "## Where a notification's work goes\n\nrun B");
    const section = profileSectionOf(second) as string;
    expect(section.indexOf('run B')).toBeLessThan(section.indexOf('### The profile run before'));
    expect(section.indexOf('### The profile run before')).toBeLessThan(section.indexOf('run A'));
    // A third run keeps only the one before it.
    const third = profileSectionOf(withProfileSection(second, "## Where a notification's work goes\n\nrun C")) as string;
    expect([third.includes('run C'), third.includes('run B'), third.includes('run A')]).toEqual([true, true, false]);
    const regenerated = keepProfileSection('# Benchmarks\n\nnew tables\n', second);
    expect(regenerated.startsWith('# Benchmarks\n\nnew tables\n')).toBe(true);
    expect(profileSectionOf(regenerated)).toBe(section);
    expect(keepProfileSection('# Benchmarks\n', '# no section\n')).toBe('# Benchmarks\n');
  });
});

// MONITOR's stream parsed on a real Redis: a BullMQ add to a deliver queue is
// BullMQ's script with the commands it runs inside, under `BullMQ deliver`; a
// plain command outside any script is `other`.
describe('monitorRedis', () => {
  it('charges a script and the commands inside it to its stage', { timeout: 30_000 }, async () => {
    const server = await startRedis('everysec');
    const redis = new Redis(server.url, { maxRetriesPerRequest: null });
    const queue = new Queue('deliver', { connection: redis, prefix: '{ssq}' });
    try {
      await queue.add('n', { a: 1 });
      const monitor = await monitorRedis(server.url);
      for (let i = 0; i < 4; i++) await queue.add('n', { i });
      await redis.set('plain', '1');
      const got = await monitor.stop(2);
      expect(got.byScript['BullMQ addStandardJob']?.calls).toBe(2);
      expect(got.byScript['BullMQ addStandardJob']?.commandsInside).toBeGreaterThan(0);
      expect(got.byStage['BullMQ deliver']).toEqual({ commands: 2 + (got.byScript['BullMQ addStandardJob']?.commandsInside ?? 0), scriptCalls: 2 });
      expect(got.byStage.other?.commands).toBe(0.5);
      expect(got.byCommand.set).toBe(0.5);
      expect(got.scriptCalls).toBe(2);
    } finally {
      await queue.close();
      redis.disconnect();
      await server.stop();
    }
  });
});
