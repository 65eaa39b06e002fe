import { setTimeout as delay } from 'node:timers/promises';
import { setMaxListeners } from 'node:events';
import type { FaultProxy } from '@singleshot/test-harness';
import type { ChaosStore, FaultContext } from './chaos-store';
import type { ChaosFleet, FleetMember } from './fleet';
import type { FaultAction, FaultSchedule, ProxyPath } from './fault-schedule';

export interface NemesisDeps {
  fleet: ChaosFleet;
  /** The Redis (single or cluster) with its proxies: Redis link faults and server faults go through it. */
  store: ChaosStore;
  /** The proxy between delivery and the provider. */
  provider: FaultProxy;
  /** Pids of processes holding an operation lock now (from the op hashes' `owner`). */
  lockHolders(): Promise<number[]>;
}

/** Faults injected, by kind (`kill-worker:delivery`, `proxy:redis:half-open`, `stop-master`, …). */
export type FaultCounts = Record<string, number>;

// timers/promises removes its abort listener when the timer fires (a hand-rolled one leaks a listener per sleep).
const sleep = (ms: number, signal: AbortSignal) => delay(Math.max(0, ms), undefined, { signal }).catch(() => undefined);

const withTimeout = <T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> =>
  Promise.race([promise.catch(() => fallback), new Promise<T>((r) => setTimeout(() => r(fallback), ms).unref())]);

/**
 * Carries out a fault timeline against the real fleet, Redis and proxies, then
 * heals everything: stopped processes continued, dead ones started, Redis up
 * (on a cluster: every node running, every master with a replica), proxies passing. Every fault is bounded in time; `heal()` cuts short what is
 * still running when the window closes. Faults that could not be carried out
 * (the target was already down) are skipped and not counted.
 */
export class Nemesis {
  readonly counts: FaultCounts = {};
  /** What happened when, for the report (`+12.3s kill-worker delivery-1 pid 123`). */
  readonly timeline: string[] = [];
  /** Faults that failed in a way the fleet should not have (e.g. a member that would not start again). */
  readonly errors: string[] = [];
  private readonly healing = new AbortController();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly proxyEpoch: Record<ProxyPath, number> = { redis: 0, provider: 0 };
  private startAt = Date.now();

  constructor(private readonly deps: NemesisDeps) {
    // Every fault still running waits on it; that is not a leak.
    setMaxListeners(0, this.healing.signal);
  }

  /** Runs the timeline from `startAt` until its window closes (or `signal` aborts), then heals. */
  async run(schedule: FaultSchedule, startAt: number, signal?: AbortSignal): Promise<void> {
    this.startAt = startAt;
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for (const action of schedule.actions) {
        await sleep(startAt + action.atMs - Date.now(), stop.signal);
        if (stop.signal.aborted) break;
        const task = this.fire(action).catch((err: unknown) => {
          this.errors.push(`${action.kind} at ${action.atMs} ms: ${err instanceof Error ? err.message : String(err)}`);
        });
        this.inFlight.add(task);
        void task.finally(() => this.inFlight.delete(task));
      }
      await sleep(startAt + schedule.windowMs - Date.now(), stop.signal);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      await this.heal();
    }
  }

  /** Ends every fault now and waits until the system is whole again. */
  async heal(): Promise<void> {
    this.healing.abort();
    await Promise.allSettled([...this.inFlight]);
    for (const proxy of this.deps.store.linkProxies) proxy.heal();
    this.deps.provider.heal();
    await this.deps.store.heal();
    await this.deps.fleet.heal();
    this.note('healed: faults stopped');
  }

  private count(kind: string): void {
    this.counts[kind] = (this.counts[kind] ?? 0) + 1;
  }

  private note(what: string): void {
    this.timeline.push(`+${((Date.now() - this.startAt) / 1000).toFixed(1)}s ${what}`);
  }

  private context(): FaultContext {
    return { healing: this.healing.signal, note: (what) => this.note(what), count: (kind) => this.count(kind) };
  }

  /** The proxy a fault on `path` goes to now; on the Redis path of a cluster, the link to one master. */
  private async proxyFor(path: ProxyPath, pick: number): Promise<{ proxy: FaultProxy; label: string; name: string }> {
    if (path === 'provider') return { proxy: this.deps.provider, label: 'provider', name: 'provider' };
    const { proxy, name } = await this.deps.store.linkProxy(pick);
    return { proxy, label: this.deps.store.linkLabel, name };
  }

  private async fire(action: FaultAction): Promise<void> {
    const { fleet } = this.deps;
    const healing = this.healing.signal;
    switch (action.kind) {
      case 'kill-worker': {
        const member = fleet.members[action.target] as FleetMember;
        if (!member.running()) return;
        const pid = member.pid();
        await fleet.kill(member);
        this.count(`kill-worker:${member.app}`);
        this.note(`SIGKILL ${member.name} (pid ${pid})`);
        await sleep(action.restartAfterMs, healing);
        await fleet.restart(member);
        // A later kill of the same member may have hit it while it was starting; that one restarts it.
        this.note(member.running() ? `restarted ${member.name} (pid ${member.pid()})` : `${member.name} was killed again while starting`);
        return;
      }
      case 'stop-holder': {
        const holders = await withTimeout(this.deps.lockHolders(), 1500, [] as number[]);
        const candidates = holders.map((pid) => fleet.byPid(pid)).filter((m): m is FleetMember => m?.app === 'delivery' && !m.stopped());
        const fallback = fleet.members[action.fallback] as FleetMember;
        const member =
          candidates[0] ??
          (fallback.running() && !fallback.stopped() ? fallback : fleet.members.find((m) => m.app === 'delivery' && m.running() && !m.stopped()));
        if (!member) return;
        fleet.stop(member);
        this.count(candidates[0] ? 'stop-holder:lock-holder' : 'stop-holder:delivery');
        this.note(`SIGSTOP ${member.name} (pid ${member.pid()}${candidates[0] ? ', holds a lock' : ''}) for ${action.durationMs} ms`);
        await sleep(action.durationMs, healing);
        fleet.cont(member);
        this.note(`SIGCONT ${member.name}`);
        return;
      }
      case 'kill-redis':
      case 'kill-master':
      case 'stop-master':
        await this.deps.store.serverFault(action, this.context());
        return;
      case 'proxy': {
        const { proxy, label, name } = await this.proxyFor(action.path, action.pick);
        if (action.fault === 'reset') {
          const cut = proxy.resetAll();
          this.count(`proxy:${label}:reset`);
          this.note(`proxy ${name}: reset ${cut} connections`);
          return;
        }
        const epoch = ++this.proxyEpoch[action.path];
        // A new fault on the path replaces the running one, also when it picked another master's link: one faulty link at a time.
        if (action.path === 'redis') for (const other of this.deps.store.linkProxies) if (other !== proxy) other.heal();
        proxy.set(action.fault === 'latency' ? { kind: 'latency', delayMs: action.delayMs } : { kind: action.fault });
        this.count(`proxy:${label}:${action.fault}`);
        this.note(`proxy ${name}: ${action.fault}${action.fault === 'latency' ? ` ${action.delayMs} ms` : ''} for ${action.durationMs} ms`);
        await sleep(action.durationMs, healing);
        // A later fault on this path replaced this one: leave it in place.
        if (this.proxyEpoch[action.path] === epoch) proxy.heal();
        return;
      }
    }
  }
}
