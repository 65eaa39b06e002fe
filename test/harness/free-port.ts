import { freePort } from '@singleshot/loadkit';

/**
 * A free loopback port for a server a test starts: below the kernel's ephemeral
 * range, so no outgoing connection on the machine takes it between this check
 * and the server's bind, or while a test has that server stopped before its
 * restart on the same port (see `freePort` in @singleshot/loadkit).
 */
export { freePort };

/** Polls `check` until it returns a truthy value or `timeoutMs` passes (then throws `what`). */
export async function waitUntil<T>(
  check: () => T | Promise<T>,
  what: string,
  { timeoutMs = 60_000, intervalMs = 50 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * Starts a server a test needs; when `start` fails, runs `cleanup` (stop the
 * server, delete its dir) and rethrows. A server that did not answer within
 * its start is still running, and would outlive the test run.
 */
export async function startOrCleanUp(start: () => Promise<void>, cleanup: () => Promise<void>): Promise<void> {
  try {
    await start();
  } catch (err) {
    await cleanup().catch(() => undefined);
    throw err;
  }
}
