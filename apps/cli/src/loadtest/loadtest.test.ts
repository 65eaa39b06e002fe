import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LoadtestReport } from './run';
import { embeddedProducerLimit, retryAfterMs } from './run';

// `singleshot loadtest --embedded` as a user runs it: the built CLI (npm test
// builds first) starting its own redis-server and fleet on free ports.
const ROOT = resolve(__dirname, '../../../..');
const CLI = resolve(ROOT, 'dist/apps/cli/main.js');

function loadtest(...args: string[]): ChildProcess & { done: Promise<{ code: number | null; stdout: string; stderr: string }> } {
  const child = spawn(process.execPath, [CLI, 'loadtest', '--embedded', '--no-progress', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((r) => child.once('close', (code) => r({ code, stdout, stderr })));
  return Object.assign(child, { done });
}

const alive = (pid: number) => existsSync(`/proc/${pid}`) && !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));

/** Pids whose parent is `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .flatMap((name) => {
      try {
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid ? [Number(name)] : [];
      } catch {
        return [];
      }
    });
}

describe('loadtest --embedded', () => {
  it('sizes the producer limit above the offered load, and reads Retry-After', () => {
    // --rate 400 --dup 3: 1,200 requests/s, above ingest's default 1,000/s.
    expect(embeddedProducerLimit({ rate: 400, dup: 3 }).perSecond).toBeGreaterThan(1_200);
    expect(embeddedProducerLimit({ dup: 3 }).perSecond).toBeGreaterThanOrEqual(100_000);
    expect(embeddedProducerLimit({ rate: 400, dup: 3, producerLimit: 10 })).toEqual({ perSecond: 10, burst: 10 });
    expect([retryAfterMs('1'), retryAfterMs('0'), retryAfterMs(undefined), retryAfterMs('soon'), retryAfterMs('3600')]).toEqual([1_000, 50, 1_000, 1_000, 30_000]);
  });

  it('completes a short open-loop run with its report and leaves no process behind', async () => {
    const run = loadtest('--rate', '40', '--duration', '5', '--dup', '3', '--json');
    const { code, stdout, stderr } = await run.done;
    expect(code, stderr).toBe(0);
    const report = JSON.parse(stdout) as LoadtestReport;
    expect(report).toMatchObject({ events: 200, notifications: 200, duplicates: 0, lost: 0, failedRequests: 0, rateLimitedAnswers: 0 });
    expect(report.producerLimit?.perSecond).toBeGreaterThan(40 * 3);
    // The fleet and its Redis.
    expect(report.embeddedPids).toHaveLength(2);
    for (const pid of report.embeddedPids ?? []) expect(alive(pid), `pid ${pid}`).toBe(false);
  });

  it('counts 429s from a low producer limit, waits Retry-After and retries, and still delivers every event once', async () => {
    const run = loadtest('--events', '30', '--dup', '3', '--concurrency', '30', '--producer-limit', '10', '--json');
    const { code, stdout, stderr } = await run.done;
    expect(code, stderr).toBe(0);
    const report = JSON.parse(stdout) as LoadtestReport;
    expect(report.producerLimit).toEqual({ perSecond: 10, burst: 10 });
    expect(report.rateLimitedAnswers).toBeGreaterThan(0);
    expect(report).toMatchObject({ notifications: 30, duplicates: 0, lost: 0, failedRequests: 0 });
    for (const pid of report.embeddedPids ?? []) expect(alive(pid), `pid ${pid}`).toBe(false);
  });

  it.each(['SIGINT', 'SIGTERM'] as const)('on %s stops the Redis and fleet it started and exits non-zero', async (signal) => {
    const run = loadtest('--rate', '20', '--duration', '600');
    const pid = run.pid ?? 0;
    // Its two children (redis-server, the fleet) are up, and the fleet answers: the run is sending.
    let started: number[] = [];
    while (started.length < 2 && run.exitCode === null) {
      started = childrenOf(pid);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(started).toHaveLength(2);
    run.kill(signal);
    const { code } = await run.done;
    expect(code).toBe(signal === 'SIGINT' ? 130 : 143);
    for (const child of started) expect(alive(child), `pid ${child}`).toBe(false);
  });
});
