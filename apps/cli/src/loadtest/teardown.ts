import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';

/**
 * What a loadtest started (child processes, temp dirs) and must stop on every
 * way out: the normal end and a thrown error (runLoadtest's `finally`),
 * SIGINT and SIGTERM (graceful stop, then exit 130 / 143), and anything else
 * that ends the process (an uncaught exception: process `exit` kills what is
 * left with SIGKILL and removes the dirs, synchronously).
 */
export class Teardown {
  private readonly children = new Set<ChildProcess>();
  private readonly dirs = new Set<string>();

  /** Tracks a child until it exits. */
  child<T extends ChildProcess>(child: T): T {
    this.children.add(child);
    child.once('exit', () => this.children.delete(child));
    return child;
  }

  /** A temp dir to remove at the end. */
  dir(path: string): string {
    this.dirs.add(path);
    return path;
  }

  /** Pids of the tracked children still running. */
  pids(): number[] {
    return [...this.children].flatMap((c) => (c.pid !== undefined && c.exitCode === null && c.signalCode === null ? [c.pid] : []));
  }

  /** SIGKILL every child still running and remove the dirs. Synchronous: safe in a process `exit` handler. */
  killNow(): void {
    for (const child of this.children) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    this.children.clear();
    this.removeDirs();
  }

  /** SIGTERM every child still running, SIGKILL what has not exited after `graceMs`, then remove the dirs. */
  async stopAll(graceMs = 10_000): Promise<void> {
    const running = [...this.children].filter((c) => c.exitCode === null && c.signalCode === null);
    const exited = running.map((c) => new Promise<void>((resolve) => (c.exitCode !== null || c.signalCode !== null ? resolve() : c.once('exit', () => resolve()))));
    for (const child of running) child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(exited), new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    this.killNow();
  }

  removeDirs(): void {
    for (const dir of this.dirs) rmSync(dir, { recursive: true, force: true });
    this.dirs.clear();
  }
}

const EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;

/**
 * Installs the process-level guards for one loadtest: on SIGINT or SIGTERM,
 * `stop` (graceful, bounded by `graceMs`) and exit 130 / 143; on process
 * `exit` for any reason, `teardown.killNow()`. Returns the uninstaller.
 */
export function guardProcess(teardown: Teardown, stop: () => Promise<void>, graceMs = 15_000): () => void {
  const onExit = () => teardown.killNow();
  const onSignal = (signal: keyof typeof EXIT_CODES) => {
    console.error(`\nloadtest: ${signal}, stopping what it started`);
    const timer = setTimeout(() => process.exit(EXIT_CODES[signal]), graceMs);
    timer.unref();
    stop()
      .catch(() => undefined)
      .finally(() => process.exit(EXIT_CODES[signal]));
  };
  const onInt = () => onSignal('SIGINT');
  const onTerm = () => onSignal('SIGTERM');
  process.once('exit', onExit);
  process.once('SIGINT', onInt);
  process.once('SIGTERM', onTerm);
  return () => {
    process.off('exit', onExit);
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
  };
}
