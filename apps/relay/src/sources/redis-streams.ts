import { hostname } from 'node:os';
import { Redis } from 'ioredis';
import type { RedisStreamSourceConfig } from '@singleshot/config';
import { deriveEvent } from '../derive';
import type { Source, SourceDeps } from '../source';
import { sourceLoop, type SourceAdapter } from '../source-loop';
import type { SourceSession } from '../source-session';

type Entry = [id: string, fields: string[]] | null;

/**
 * A Redis stream read through a consumer group (docs/sources.md). Entries
 * are read with `XREADGROUP`, `concurrency` at a time, and each is `XACK`ed
 * only after its acceptance resolved. A relay that dies leaves its entries
 * pending under its consumer name; any live relay claims them with
 * `XAUTOCLAIM` once they are `claimIdleMs` idle, and their second hand-off is
 * an ordinary duplicate arrival.
 */
export function redisStreamSource(config: RedisStreamSourceConfig, deps: SourceDeps): Source {
  const logger = deps.logger.child({ source: config.name });
  // Each relay process is its own consumer: a crashed one's entries stay
  // pending under its old name until claimed.
  const consumer = `${hostname()}-${process.pid}`;
  const options = { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: (times: number) => Math.min(times * 100, 2_000) };
  const reader = new Redis(config.url, { ...options, connectionName: `singleshot-relay-${config.name}` });
  const control = new Redis(config.url, { ...options, connectionName: `singleshot-relay-${config.name}-ctl` });
  // An error event with no listener would crash the process; the loop sees the failures itself.
  reader.on('error', () => undefined);
  control.on('error', () => undefined);
  let lastClaim = 0;

  const ensureGroup = async (): Promise<void> => {
    if (await groupInfo()) return;
    try {
      // From the stream's start: entries added before the group existed are events too.
      await control.xgroup('CREATE', config.stream, config.group, '0', 'MKSTREAM');
    } catch (err) {
      // Another relay may have made it an instant ago (BUSYGROUP): fine if it exists now.
      if (!(await groupInfo())) throw err;
    }
  };

  /** The group's XINFO fields, or undefined when the stream or the group does not exist. */
  const groupInfo = async (): Promise<Record<string, unknown> | undefined> => {
    if (Number(await control.exists(config.stream)) === 0) return undefined;
    const groups = (await control.call('XINFO', 'GROUPS', config.stream)) as unknown[][];
    for (const g of groups) {
      const info: Record<string, unknown> = {};
      for (let i = 0; i + 1 < g.length; i += 2) info[String(g[i])] = g[i + 1];
      if (info.name === config.group) return info;
    }
    return undefined;
  };

  const handle = async (session: SourceSession, entry: Entry, id: string): Promise<void> => {
    if (entry === null) {
      // Trimmed away while pending: nothing left to accept.
      await control.xack(config.stream, config.group, id);
      return;
    }
    const fields: Record<string, string> = {};
    for (let i = 0; i + 1 < entry[1].length; i += 2) fields[entry[1][i] as string] = entry[1][i + 1] as string;
    const body = fields[config.payloadField] ?? '';
    const derived = Object.hasOwn(fields, config.payloadField)
      ? deriveEvent(config, { body, fields })
      : ({ ok: false, problem: `no "${config.payloadField}" field in the entry` } as const);
    // Not settled (stopping): left pending, claimed again later.
    await session.accept(derived, { key: `${config.stream}:${id}`, details: { type: 'redis-streams', stream: config.stream, id }, body }, () => control.xack(config.stream, config.group, id));
  };

  const handleAll = async (session: SourceSession, entries: Entry[], ids: string[]): Promise<void> => {
    const results = await Promise.allSettled(entries.map((entry, i) => handle(session, entry, ids[i] as string)));
    for (const r of results) {
      // An XACK that failed leaves the entry pending: it is claimed again later, a duplicate.
      if (r.status === 'rejected') throw r.reason;
    }
  };

  /** Claims entries other (dead) consumers left pending; true when it found some. */
  const claim = async (session: SourceSession): Promise<boolean> => {
    lastClaim = Date.now();
    let cursor = '0-0';
    let found = false;
    do {
      const reply = (await control.call('XAUTOCLAIM', config.stream, config.group, consumer, String(config.claimIdleMs), cursor, 'COUNT', String(config.concurrency))) as [string, Entry[], string[]?];
      cursor = reply[0];
      const entries = reply[1].filter((e): e is [string, string[]] => e !== null);
      if (entries.length > 0) {
        found = true;
        logger.info({ event: 'source_claimed', count: entries.length }, 'claimed entries left pending by another consumer');
        await handleAll(session, entries, entries.map((e) => e[0]));
      }
    } while (cursor !== '0-0' && !session.stopping);
    await forgetIdleConsumers();
    return found;
  };

  /**
   * Each relay process is a new consumer name; once a dead one has nothing
   * pending (claimed above) it is removed from the group. Removing a live but
   * quiet one loses nothing either: it has nothing pending, and its next read
   * makes it again.
   */
  const forgetIdleConsumers = async (): Promise<void> => {
    const consumers = (await control.call('XINFO', 'CONSUMERS', config.stream, config.group)) as unknown[][];
    for (const c of consumers) {
      const info: Record<string, unknown> = {};
      for (let i = 0; i + 1 < c.length; i += 2) info[String(c[i])] = c[i + 1];
      if (info.name === consumer || Number(info.pending) !== 0 || Number(info.idle) < Math.max(60_000, 10 * config.claimIdleMs)) continue;
      await control.call('XGROUP', 'DELCONSUMER', config.stream, config.group, String(info.name));
    }
  };

  const readNew = async (session: SourceSession): Promise<void> => {
    const reply = (await reader.xreadgroup('GROUP', config.group, consumer, 'COUNT', config.concurrency, 'BLOCK', 1_000, 'STREAMS', config.stream, '>')) as
      | Array<[string, Array<[string, string[]]>]>
      | null;
    const entries = reply?.[0]?.[1] ?? [];
    if (entries.length > 0) await handleAll(session, entries, entries.map((e) => e[0]));
  };

  let clientsStarted = false;
  const adapter: SourceAdapter = {
    name: config.name,
    origin: 'Redis',
    async connect() {
      if (!clientsStarted) {
        clientsStarted = true;
        // Once: ioredis reconnects its clients by itself from then on.
        await Promise.all([reader.connect().catch(() => undefined), control.connect().catch(() => undefined)]);
      }
      // Again on every connection: after NOGROUP (the stream was deleted) this makes the group anew.
      await ensureGroup();
      return { stream: config.stream, group: config.group, consumer };
    },
    async consume(session) {
      while (!session.stopping) {
        if (Date.now() - lastClaim >= Math.min(config.claimIdleMs / 2, 5_000)) await claim(session);
        await readNew(session);
      }
    },
    // The blocking read ends within its 1 s block.
    interrupt: () => undefined,
    // The clients outlive a failed read: ioredis reconnects them.
    disconnect: async () => undefined,
    async close() {
      reader.disconnect();
      control.disconnect();
    },
    reachable: () => control.status === 'ready' && reader.status === 'ready',
    async lag() {
      if (control.status !== 'ready') return undefined;
      try {
        const info = await groupInfo();
        return info ? Number(info.pending ?? 0) + Number(info.lag ?? 0) : undefined;
      } catch {
        return undefined;
      }
    },
  };
  return sourceLoop(adapter, deps);
}
