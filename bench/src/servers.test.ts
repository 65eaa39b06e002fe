import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { answersQuery, canConnect, freePort, startPostgres, startRedis } from './servers';

async function config(url: string, names: string[]): Promise<Record<string, string>> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const out: Record<string, string> = {};
    for (const name of names) {
      const [, value] = (await redis.config('GET', name)) as [string, string];
      out[name] = value;
    }
    return out;
  } finally {
    redis.disconnect();
  }
}

// The measured configuration is AOF everysec with Redis's own rewrite
// thresholds; `--no-aof-rewrite` (a diagnostic: what the rewrites cost) must
// turn off only the automatic rewrite, never the AOF itself (the AOF stays on
// in what is measured, as it does in production).
describe('bench Redis', () => {
  it.each([
    { name: 'runs with AOF everysec and automatic rewrites by default', aofRewrite: undefined, percentage: '100' },
    { name: 'keeps the AOF on when only the automatic rewrite is turned off', aofRewrite: false, percentage: '0' },
  ])('$name', async ({ aofRewrite, percentage }) => {
    const server = await startRedis('everysec', aofRewrite);
    try {
      expect(await config(server.url, ['appendonly', 'appendfsync', 'auto-aof-rewrite-percentage'])).toEqual({
        appendonly: 'yes',
        appendfsync: 'everysec',
        'auto-aof-rewrite-percentage': percentage,
      });
    } finally {
      await server.stop();
    }
  });
});

// The systems under test bind their ports a second after freePort checked
// them; a port from the ephemeral range can meanwhile become some outgoing
// connection's local port (EADDRINUSE in CI), one below it cannot.
describe('bench ports', () => {
  it('hands out loopback ports below the ephemeral range that can be bound', async () => {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(low);
    }
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(ports[0], '127.0.0.1', () => resolve());
    });
    await new Promise((r) => server.close(r));
  });
});

/**
 * What a PostgreSQL still starting says to a client: it accepts the TCP
 * connection, reads the startup packet, and answers with a FATAL
 * ErrorResponse carrying SQLSTATE 57P03.
 */
function startingUpServer() {
  return createServer((socket) => {
    socket.once('data', () => {
      const fields = Buffer.from('SFATAL\0VFATAL\0C57P03\0Mthe database system is starting up\0\0', 'latin1');
      const head = Buffer.alloc(5);
      head.write('E', 0, 'latin1');
      head.writeInt32BE(fields.length + 4, 1);
      socket.end(Buffer.concat([head, fields]));
    });
  });
}

// CI once failed with "the database system is starting up": the bench's
// PostgreSQL was taken as ready when its port accepted a connection, and the
// outbox origin's first query came before the server could answer one.
describe('bench PostgreSQL', () => {
  it('is not taken as ready by a server that accepts connections but refuses queries while starting up', async () => {
    const server = startingUpServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const port = (server.address() as { port: number }).port;
    try {
      expect(await canConnect(port)).toBe(true);
      expect(await answersQuery(port, 'bench')).toBe(false);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('answers the first query as soon as it is handed out', async () => {
    const server = await startPostgres();
    const client = new pg.Client({ connectionString: server.url });
    try {
      await client.connect();
      expect((await client.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await client.end().catch(() => undefined);
      await server.stop();
    }
  }, 60_000);
});
