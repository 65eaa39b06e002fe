import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { freePort, startFaultProxy, waitUntil, type FaultProxy } from '@singleshot/test-harness';

// The proxy's faults, seen from both ends of a real TCP echo server.
interface Echo {
  server: Server;
  port: number;
  /** Connections the server accepted. */
  accepted: number;
  /** Everything the server read, over all connections. */
  received: string;
  sockets: Set<Socket>;
}

async function startEcho(): Promise<Echo> {
  const echo: Echo = { server: createServer(), port: 0, accepted: 0, received: '', sockets: new Set() };
  echo.server.on('connection', (socket) => {
    echo.accepted++;
    echo.sockets.add(socket);
    socket.on('data', (chunk: Buffer) => {
      echo.received += chunk.toString();
      socket.write(chunk);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => echo.sockets.delete(socket));
  });
  echo.port = await new Promise<number>((resolve) =>
    echo.server.listen(0, '127.0.0.1', () => resolve((echo.server.address() as { port: number }).port)),
  );
  return echo;
}

interface Client {
  socket: Socket;
  data: string;
  closed: boolean;
  error: string | undefined;
}

async function dial(port: number): Promise<Client> {
  const socket = connect({ host: '127.0.0.1', port });
  const client: Client = { socket, data: '', closed: false, error: undefined };
  socket.on('data', (c: Buffer) => (client.data += c.toString()));
  socket.on('error', (err: NodeJS.ErrnoException) => (client.error = err.code ?? err.message));
  socket.on('close', () => (client.closed = true));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return client;
}

describe('fault proxy', () => {
  let echo: Echo;
  let proxy: FaultProxy;
  const clients: Client[] = [];
  const open = async () => {
    const client = await dial(proxy.port);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    echo = await startEcho();
    proxy = await startFaultProxy({ port: echo.port });
  });

  afterAll(async () => {
    for (const c of clients) c.socket.destroy();
    await proxy.close();
    for (const s of echo.sockets) s.destroy();
    await new Promise((r) => echo.server.close(r));
  });

  it('passes bytes both ways', async () => {
    proxy.heal();
    const client = await open();
    client.socket.write('hello');
    await waitUntil(() => client.data === 'hello', 'the echo', { timeoutMs: 5000 });
  });

  it('keeps the order of chunks under latency', async () => {
    proxy.set({ kind: 'latency', delayMs: 30 });
    const client = await open();
    const parts = Array.from({ length: 20 }, (_, i) => `<${i}>`);
    for (const part of parts) client.socket.write(part);
    await waitUntil(() => client.data.length === parts.join('').length, 'the delayed echo', { timeoutMs: 10_000 });
    expect(client.data).toBe(parts.join(''));
    proxy.heal();
  });

  it('half-open: the server acts on the request, the answer never comes back, healing resets', async () => {
    proxy.heal();
    const client = await open();
    proxy.set({ kind: 'half-open' });
    const before = echo.received.length;
    client.socket.write('charge-card');
    await waitUntil(() => echo.received.length === before + 'charge-card'.length, 'the server to read the request', { timeoutMs: 5000 });
    proxy.heal();
    await waitUntil(() => client.closed, 'the client connection to be reset', { timeoutMs: 5000 });
    expect(client.data).toBe('');
  });

  it('blackhole: a new connection never reaches the server, and is reset when the fault ends', async () => {
    proxy.heal();
    const acceptedBefore = echo.accepted;
    const receivedBefore = echo.received.length;
    proxy.set({ kind: 'blackhole' });
    const client = await open();
    client.socket.write('into the void');
    await waitUntil(() => proxy.stats.connections > 0 && proxy.stats.open > 0, 'the proxy to hold the connection', { timeoutMs: 5000 });
    proxy.heal();
    await waitUntil(() => client.closed, 'the client connection to be reset', { timeoutMs: 5000 });
    expect(echo.accepted).toBe(acceptedBefore);
    expect(echo.received.length).toBe(receivedBefore);
    expect(client.data).toBe('');
  });

  it('resetAll cuts open connections with a reset; new ones work', async () => {
    proxy.heal();
    const client = await open();
    client.socket.write('x');
    await waitUntil(() => client.data === 'x', 'the echo', { timeoutMs: 5000 });
    expect(proxy.resetAll()).toBeGreaterThanOrEqual(1);
    await waitUntil(() => client.closed, 'the client connection to close', { timeoutMs: 5000 });
    expect(client.error).toBe('ECONNRESET');
    const again = await open();
    again.socket.write('y');
    await waitUntil(() => again.data === 'y', 'the echo after the reset', { timeoutMs: 5000 });
  });

  it('a server that refuses makes the proxy reset the client', async () => {
    // A port nobody listens on: the proxy's dial is refused.
    const refused = await startFaultProxy({ port: await freePort() });
    try {
      const client = await dial(refused.port);
      await waitUntil(() => client.closed, 'the client connection to be cut', { timeoutMs: 5000 });
      expect(client.data).toBe('');
    } finally {
      await refused.close();
    }
  });
});
