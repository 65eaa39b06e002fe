import type { FaultProxy } from '@singleshot/test-harness';
import type { ServerFaultAction } from './fault-schedule';

/** What a server fault reports back to the nemesis while it runs. */
export interface FaultContext {
  /** Aborts when the run heals: cut the fault short. */
  healing: AbortSignal;
  /** A timeline line (`SIGKILL master 127.0.0.1:7001`). */
  note(what: string): void;
  /** Counts one injected fault of this kind. */
  count(kind: string): void;
}

/**
 * The Redis of a chaos run, a single server or a cluster, with the fault
 * proxies between the fleet and it. The nemesis asks it for the proxy a Redis
 * link fault goes to and has it carry out the server faults, so the fault
 * timeline is the same code for both.
 */
export interface ChaosStore {
  readonly kind: 'single' | 'cluster';
  /** The fleet's `redis` config section: every connection goes through a fault proxy. */
  readonly fleetRedis: Record<string, unknown>;
  /** The checker's `redis` config section: straight to the servers, never through a proxy. */
  readonly checkerRedis: Record<string, unknown>;
  /** The Redis path's name in fault counts (`proxy:<linkLabel>:reset`). */
  readonly linkLabel: string;
  /** Every proxy on the Redis path. */
  readonly linkProxies: readonly FaultProxy[];
  /** The proxy a Redis link fault goes to now (`pick` chooses among a cluster's masters), and what it fronts. */
  linkProxy(pick: number): Promise<{ proxy: FaultProxy; name: string }>;
  /** Carries out one server fault; resolves once it has healed (or was cut short by `ctx.healing`). */
  serverFault(action: ServerFaultAction, ctx: FaultContext): Promise<void>;
  /** Servers whole again: nothing dead, nothing paused (on a cluster: every master with an online replica). */
  heal(): Promise<void>;
  close(): Promise<void>;
}
