import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A handler under test, listening on a free loopback port. */
export interface ServedHandler {
  url: string;
  /** Cuts the open connections (a response a test holds open included) and stops listening. */
  close(): Promise<void>;
}

/** Serves one plain node request handler on a free loopback port, for a test to fetch. */
export async function serveHandler(handler: RequestListener): Promise<ServedHandler> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
