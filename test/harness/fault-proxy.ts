import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A fault-injecting TCP proxy on 127.0.0.1 for tests: put it between a client
 * (workers, an HTTP provider client) and a real server (Redis, a provider sink)
 * and switch faults at run time.
 *
 * - `pass`: bytes flow as they come (order kept).
 * - `latency`: every chunk is held `delayMs` before it is forwarded, in order.
 * - `blackhole`: nothing flows either way; new connections are accepted but
 *   never reach the server (a dropped SYN looks the same to the client: silence).
 * - `half-open`: client → server flows, server → client is held. The server
 *   acts on requests whose answers never arrive (the classic "the provider
 *   took it, the response was lost").
 *
 * Held bytes are not released later: leaving `blackhole` or `half-open` resets
 * (TCP RST) every connection that held something, as a real connection that
 * lost packets for seconds ends in a timeout or a reset. Releasing them would
 * make the fault a long latency instead, and would deliver requests their
 * client gave up on long ago — a different fault, not this one.
 *
 * `resetAll()` cuts every open connection at once with an RST (a crashed
 * middlebox, a NAT table flush). Bytes already forwarded stay forwarded: a
 * request the server read before the reset is still acted on.
 */
export type ProxyMode =
  | { kind: 'pass' }
  | { kind: 'latency'; delayMs: number }
  | { kind: 'blackhole' }
  | { kind: 'half-open' };

export interface FaultProxyStats {
  /** Client connections accepted so far. */
  connections: number;
  /** Connections cut with a reset (by `resetAll`, by leaving a holding mode, or on an error). */
  resets: number;
  /** Connections open now. */
  open: number;
}

export interface FaultProxy {
  readonly host: '127.0.0.1';
  readonly port: number;
  readonly target: { host: string; port: number };
  readonly stats: FaultProxyStats;
  mode(): ProxyMode;
  /** Applies `mode` to all traffic from now on (see the type for what each does). */
  set(mode: ProxyMode): void;
  /** Back to `pass`. */
  heal(): void;
  /** Resets every open connection now; returns how many were cut. */
  resetAll(): number;
  /** Cuts every connection and stops listening. */
  close(): Promise<void>;
}

interface Chunk {
  data: Buffer;
  /** When it may be forwarded; Infinity while held. */
  dueAt: number;
}

/** One direction of one connection. */
interface Pipe {
  queue: Chunk[];
  lastDueAt: number;
  timer: NodeJS.Timeout | undefined;
  /** The source sent FIN: end the destination once the queue is empty. */
  ended: boolean;
}

interface Link {
  client: Socket;
  upstream: Socket | undefined;
  up: Pipe;
  down: Pipe;
  /** Bytes were held (or the server never dialled): the link dies when the fault ends. */
  stalled: boolean;
  dead: boolean;
}

const newPipe = (): Pipe => ({ queue: [], lastDueAt: 0, timer: undefined, ended: false });

function reset(socket: Socket | undefined): void {
  if (!socket || socket.destroyed) return;
  try {
    socket.resetAndDestroy();
  } catch {
    socket.destroy();
  }
}

/** Starts a proxy to `target` on an ephemeral port of 127.0.0.1. */
export async function startFaultProxy(target: { host?: string; port: number }): Promise<FaultProxy> {
  const targetHost = target.host ?? '127.0.0.1';
  const links = new Set<Link>();
  const stats: FaultProxyStats = { connections: 0, resets: 0, open: 0 };
  let current: ProxyMode = { kind: 'pass' };

  const kill = (link: Link) => {
    if (link.dead) return;
    link.dead = true;
    for (const pipe of [link.up, link.down]) {
      clearTimeout(pipe.timer);
      pipe.queue.length = 0;
    }
    stats.resets++;
    reset(link.client);
    reset(link.upstream);
  };

  const destinationOf = (link: Link, pipe: Pipe) => (pipe === link.up ? link.upstream : link.client);

  const pump = (link: Link, pipe: Pipe) => {
    if (link.dead) return;
    clearTimeout(pipe.timer);
    pipe.timer = undefined;
    const destination = destinationOf(link, pipe);
    if (!destination) return;
    const now = Date.now();
    while (pipe.queue.length > 0 && (pipe.queue[0] as Chunk).dueAt <= now) {
      destination.write((pipe.queue.shift() as Chunk).data);
    }
    const head = pipe.queue[0];
    if (head) {
      if (Number.isFinite(head.dueAt)) pipe.timer = setTimeout(() => pump(link, pipe), head.dueAt - now);
      return;
    }
    if (pipe.ended && !destination.destroyed) destination.end();
  };

  const enqueue = (link: Link, pipe: Pipe, data: Buffer) => {
    if (link.dead) return;
    const holds = current.kind === 'blackhole' || (current.kind === 'half-open' && pipe === link.down);
    if (holds) {
      link.stalled = true;
      pipe.queue.push({ data, dueAt: Number.POSITIVE_INFINITY });
      return;
    }
    const delay = current.kind === 'latency' ? current.delayMs : 0;
    // Never overtake a chunk queued earlier on the same direction.
    const dueAt = Math.max(Date.now() + delay, pipe.lastDueAt);
    pipe.lastDueAt = dueAt;
    pipe.queue.push({ data, dueAt });
    pump(link, pipe);
  };

  const wire = (link: Link, source: Socket, pipe: Pipe) => {
    source.on('data', (data: Buffer) => enqueue(link, pipe, data));
    source.on('end', () => {
      pipe.ended = true;
      pump(link, pipe);
    });
    source.on('error', () => kill(link));
    source.on('close', () => {
      // Both sides gone: forget the link. One side gone with bytes still owed to
      // it: nothing more can be delivered, so cut the other side too.
      const other = source === link.client ? link.upstream : link.client;
      if (!other || other.destroyed) {
        if (links.delete(link)) stats.open--;
      } else if (!pipe.ended) {
        kill(link);
        if (links.delete(link)) stats.open--;
      }
    });
  };

  const dial = (link: Link) => {
    const upstream = connect({ host: targetHost, port: target.port, allowHalfOpen: true });
    upstream.setNoDelay(true);
    link.upstream = upstream;
    wire(link, upstream, link.down);
    upstream.once('connect', () => pump(link, link.up));
  };

  const server: Server = createServer({ allowHalfOpen: true }, (client) => {
    client.setNoDelay(true);
    const link: Link = { client, upstream: undefined, up: newPipe(), down: newPipe(), stalled: false, dead: false };
    links.add(link);
    stats.connections++;
    stats.open++;
    wire(link, client, link.up);
    if (current.kind === 'blackhole') link.stalled = true;
    else dial(link);
  });

  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    });
  });

  const set = (mode: ProxyMode) => {
    const leavingHold = (current.kind === 'blackhole' || current.kind === 'half-open') && mode.kind !== current.kind;
    current = mode;
    if (!leavingHold) return;
    for (const link of [...links]) if (link.stalled) kill(link);
  };

  return {
    host: '127.0.0.1',
    port,
    target: { host: targetHost, port: target.port },
    stats,
    mode: () => current,
    set,
    heal: () => set({ kind: 'pass' }),
    resetAll: () => {
      const open = [...links].filter((l) => !l.dead);
      for (const link of open) kill(link);
      return open.length;
    },
    close: () =>
      new Promise<void>((resolve) => {
        current = { kind: 'pass' };
        for (const link of links) kill(link);
        links.clear();
        stats.open = 0;
        server.close(() => resolve());
      }),
  };
}
