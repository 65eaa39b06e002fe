import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Socket limits of a public HTTP server (all configurable; see docs/configuration.md, `ingest`). */
export interface ServerLimits {
  /** The whole request header must arrive within this (slowloris: half a header, then silence). */
  headersTimeoutMs: number;
  /** The whole request must arrive within this. */
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  /** Connections beyond this are closed at once by node (each holds a file descriptor). */
  maxConnections: number;
}

export interface ListeningServer {
  server: Server;
  port: number;
  close(): Promise<void>;
}

/**
 * Creates and starts an HTTP server with its timeouts set. node checks
 * `headersTimeout` and `requestTimeout` only every `connectionsCheckingInterval`
 * (30 s by default), so a stalled client could keep its socket 30 s past the
 * limit; the interval is set to a tenth of the header timeout instead.
 */
export async function listen(handler: RequestListener, port: number, host: string, limits: ServerLimits): Promise<ListeningServer> {
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: Math.max(limits.requestTimeoutMs, limits.headersTimeoutMs),
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 10))),
    },
    handler,
  );
  server.maxConnections = limits.maxConnections;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Keep-alive and stalled sockets would otherwise hold close() open.
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 5_000).unref();
      }),
  };
}
