import type { TracingImpl } from './tracing-api';

/**
 * The process's tracing, set once by startTracing. A module variable, not a
 * parameter threaded through every dependency bag: the check on the hot paths
 * is one load and one comparison, and code that never traces pays nothing more.
 */
let current: TracingImpl | undefined;

/** The installed implementation, or undefined when tracing is off. */
export function tracingImpl(): TracingImpl | undefined {
  return current;
}

/** True when tracing is on in this process. */
export function tracingOn(): boolean {
  return current !== undefined;
}

/** Installs (or, with undefined, removes) the implementation; startTracing and tests only. */
export function installTracing(impl: TracingImpl | undefined): void {
  current = impl;
}
