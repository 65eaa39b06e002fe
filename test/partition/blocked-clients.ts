import type { RedisClient } from '@singleshot/store';

/** One connection of CLIENT LIST: where it comes from, its last command, and when that began. */
export interface ClientSeen {
  id: string;
  addr: string;
  cmd: string;
  /** Milliseconds since the epoch at which the last command began, at the one-second grain Redis keeps. */
  lastCommandAt: number;
}

/**
 * The connections Redis holds from one host, read with CLIENT LIST. A
 * worker's blocking connection shows `cmd=bzpopmin` while it waits for a job;
 * `idle` (whole seconds since its last command) tells whether that wait began
 * after a given moment, which is what a healed link must show before a test
 * counts on the worker to take jobs again: TCP may still be backing off on a
 * connection that carried nothing during the cut.
 */
export async function clientsFrom(redis: RedisClient, host: string): Promise<ClientSeen[]> {
  const list = String(await redis.call('CLIENT', 'LIST'));
  const now = Date.now();
  const seen: ClientSeen[] = [];
  for (const line of list.split('\n')) {
    const fields = new Map(line.trim().split(' ').map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)] as const));
    const addr = fields.get('addr') ?? '';
    if (!addr.startsWith(`${host}:`)) continue;
    // `idle` truncates: the command began at most idle+1 seconds ago.
    seen.push({ id: fields.get('id') ?? '', addr, cmd: fields.get('cmd') ?? '', lastCommandAt: now - (Number(fields.get('idle') ?? '0') + 1) * 1000 });
  }
  return seen;
}
