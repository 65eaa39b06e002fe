/**
 * Delay before reconnect attempt `attempt` (1-based): exponential from
 * `initialDelayMs`, capped at `maxDelayMs`, with "equal jitter" (half fixed,
 * half random). Jitter matters here: after an IMAP server restart every
 * poller of every replica reconnects at once, and the server's login rate
 * limit (Dovecot's auth penalty, Gmail's) punishes a synchronized herd. The
 * fixed half keeps a flapping server from being hammered with zero delays.
 */
export function reconnectDelayMs(
  attempt: number,
  options: { initialDelayMs?: number; maxDelayMs?: number; random?: () => number } = {},
): number {
  const initial = Math.max(1, options.initialDelayMs ?? 1000);
  const max = Math.max(initial, options.maxDelayMs ?? 60_000);
  const random = options.random ?? Math.random;
  const exponent = Math.min(Math.max(0, attempt - 1), 30);
  const base = Math.min(max, initial * 2 ** exponent);
  return Math.round(base / 2 + random() * (base / 2));
}
