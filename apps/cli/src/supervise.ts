import { fork, type ChildProcess } from 'node:child_process';
import type { Logger } from '@singleshot/observability';
import type { AppName } from './run-apps';

/**
 * How `singleshot start` splits its apps over N processes (N capped at 3):
 * the HTTP path (ingest, with the light dashboard) never waits behind the
 * workers on one event loop, and a 2-core machine runs two apps at once.
 */
export function appGroups(only: readonly AppName[], processes: number): AppName[][] {
  const layouts: AppName[][][] = [
    [['ingest', 'dashboard', 'decision', 'render', 'delivery']],
    [['ingest', 'dashboard'], ['decision', 'render', 'delivery']],
    // Documents render next to the decision, so a slow one never holds up the delivery process.
    [['ingest', 'dashboard'], ['decision', 'render'], ['delivery']],
  ];
  const layout = layouts[Math.min(layouts.length, Math.max(1, processes)) - 1] ?? [];
  return layout.map((group) => group.filter((app) => only.includes(app))).filter((group) => group.length > 0);
}

export interface Supervisor {
  stop(): Promise<void>;
}

/** A child restarts after this delay; this many quick deaths in a row stop the whole command. */
const RESTART_DELAY_MS = 1000;
const MAX_QUICK_DEATHS = 5;
const QUICK_MS = 10_000;

/**
 * Runs each group of apps as a child `singleshot start --only … --processes 1`
 * with the same config and Redis. Children are in their own process group (a
 * terminal's Ctrl-C reaches only this process, which stops them once, gracefully)
 * and watch the IPC channel, so they also stop if this process dies. A child
 * that dies is restarted; one that keeps dying stops the command with exit 1.
 */
export function superviseApps(opts: { groups: AppName[][]; config?: string; redisUrl: string; logger: Logger; onGiveUp: () => void }): Supervisor {
  const children = new Map<string, ChildProcess>();
  let stopping = false;
  const quickDeaths = new Map<string, number>();
  const spawnGroup = (group: AppName[]) => {
    const name = group.join(',');
    const startedAt = Date.now();
    // METRICS_PORT sets both workers' port: the delivery process takes the next one.
    const metricsPort = Number(process.env.METRICS_PORT);
    const env = { ...process.env, REDIS_URL: opts.redisUrl, SINGLESHOT_SUPERVISED: '1', ...(name === 'delivery' && metricsPort > 0 ? { METRICS_PORT: String(metricsPort + 1) } : {}) };
    const child = fork(process.argv[1] ?? '', ['start', '--only', name, '--processes', '1', ...(opts.config ? ['--config', opts.config] : [])], {
      detached: true,
      execArgv: process.execArgv,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env,
    });
    children.set(name, child);
    opts.logger.info({ event: 'app_process_started', apps: group, pid: child.pid }, 'started app process');
    child.once('exit', (code, signal) => {
      children.delete(name);
      if (stopping) return;
      const quick = Date.now() - startedAt < QUICK_MS;
      const deaths = quick ? (quickDeaths.get(name) ?? 0) + 1 : 0;
      quickDeaths.set(name, deaths);
      opts.logger.error({ event: 'app_process_exited', apps: group, code, signal, restartInMs: RESTART_DELAY_MS }, 'app process exited; restarting it');
      if (deaths >= MAX_QUICK_DEATHS) {
        opts.logger.error({ event: 'app_process_gave_up', apps: group }, `app process died ${deaths} times within ${QUICK_MS} ms of starting; stopping`);
        opts.onGiveUp();
        return;
      }
      setTimeout(() => {
        if (!stopping) spawnGroup(group);
      }, RESTART_DELAY_MS).unref();
    });
  };
  for (const group of opts.groups) spawnGroup(group);
  // A child still running when this process exits (its own stop ran past the
  // deadline, say) is killed: it would otherwise outlive the command in its own
  // process group. A SIGKILLed supervisor runs no handler: then each child sees
  // its IPC channel close and stops itself within its own deadline.
  process.once('exit', () => {
    for (const child of children.values()) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return {
    stop: async () => {
      stopping = true;
      const running = [...children.values()];
      await Promise.all(
        running.map(
          (child) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null || child.signalCode !== null) return resolve();
              child.once('exit', () => resolve());
              // Asked over IPC, not signalled: a child that got its own SIGTERM
              // (systemd signals every process of the unit) would take a second
              // signal as "exit now" and drop its in-flight work.
              if (child.connected) child.send(STOP_MESSAGE, (err) => err && child.kill('SIGTERM'));
              else child.kill('SIGTERM');
            }),
        ),
      );
    },
  };
}

/** What the supervisor sends a child it stops. */
const STOP_MESSAGE = { type: 'singleshot:stop' } as const;

/**
 * In a supervised child: stop gracefully when the supervisor asks (over IPC) or
 * goes away (its IPC channel closes: the supervisor was SIGKILLed). The graceful
 * stop is `onShutdown`'s, bounded by `shutdownTimeoutMs` like a signalled one, so
 * a child whose supervisor died while Redis is gone does not wait for it forever.
 * Until the app has that stop, either ends the process with SIGTERM: nothing is in flight yet.
 * Returns the setter for that graceful stop.
 */
export function stopWhenSupervisorGoes(): (gracefulStop: (reason: string) => void) => void {
  let graceful: ((reason: string) => void) | undefined;
  if (process.env.SINGLESHOT_SUPERVISED !== '1' || !process.send) return () => undefined;
  const stop = (reason: string) => (graceful ? graceful(reason) : process.kill(process.pid, 'SIGTERM'));
  process.on('message', (message: unknown) => {
    if ((message as { type?: unknown } | null)?.type === STOP_MESSAGE.type) stop('supervisor');
  });
  process.once('disconnect', () => stop('supervisor_gone'));
  return (gracefulStop) => {
    graceful = gracefulStop;
  };
}
