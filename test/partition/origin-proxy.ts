import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** One request that went through an origin proxy. */
export interface ProxiedRequest {
  origin: string;
  method: string;
  /** `Idempotency-Key` of a POST, the looked-up key of a `GET /messages/:key`. */
  key: string | undefined;
  /** The provider's status, or undefined when the caller went away before the answer came. */
  status: number | undefined;
  /** The answer reached the caller (a held answer may be dropped when the caller left). */
  answered: boolean;
  receivedAt: number;
  /** When the provider answered (before any hold). */
  providerAnsweredAt: number | undefined;
  /** When the answer was passed on to the caller. */
  answeredAt: number | undefined;
  /** Kept from the provider until the caller gave up: the provider never saw it. */
  parked: boolean;
  /** When the caller of a parked POST went away. */
  callerLeftAt: number | undefined;
}

/**
 * An HTTP reverse proxy in front of the test provider, one per network path:
 * it listens on the root-namespace end of one veth link, so the provider (on
 * 127.0.0.1 of the root namespace) is reachable from inside that namespace,
 * and it tells the test which process a request came from.
 *
 * `holdAnswersMs` keeps the provider's answer to a POST for that long before
 * passing it on: the provider has accepted, the sender does not know yet. A
 * partition that starts then leaves the sender holding a claim whose send is
 * done and whose commit cannot reach Redis. A caller that goes away (its
 * deadline) cuts the upstream request too, so the provider sees the abort as
 * a provider would.
 *
 * `parkEvery` = n keeps every n-th POST from the provider altogether until
 * its caller gives up (its deadline, or its lease lost): a send that never
 * arrived, which the next holder's lookup must find missing and send itself.
 */
export class OriginProxy {
  readonly requests: ProxiedRequest[] = [];
  holdAnswersMs = 0;
  parkEvery = 0;
  private posts = 0;
  private readonly sockets = new Set<Socket>();
  private readonly server = createServer((req, res) => this.handle(req, res));
  private port = 0;

  constructor(
    readonly origin: string,
    private readonly host: string,
    private readonly upstreamPort: number,
  ) {
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  /** `http://<host>:<port>`: the provider origin for the processes on this path. */
  get url(): string {
    return `http://${this.host}:${this.port}`;
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, this.host, () => {
        this.server.off('error', reject);
        const address = this.server.address();
        this.port = typeof address === 'object' && address ? address.port : 0;
        resolve();
      });
    });
  }

  /** POSTs kept from the provider (see `parkEvery`) whose caller is still waiting. */
  parkedWaiting(): ProxiedRequest[] {
    return this.requests.filter((r) => r.parked && r.callerLeftAt === undefined);
  }

  /** POSTs from this origin whose provider answer was 2xx. */
  acceptedPosts(): ProxiedRequest[] {
    return this.requests.filter((r) => r.method === 'POST' && r.status !== undefined && r.status < 300);
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      for (const socket of this.sockets) socket.destroy();
      if (!this.server.listening) return resolve();
      this.server.close(() => resolve());
    });
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const path = req.url ?? '/';
    const header = req.headers['idempotency-key'];
    const record: ProxiedRequest = {
      origin: this.origin,
      method: req.method ?? 'GET',
      key: typeof header === 'string' ? header : path.startsWith('/messages/') ? decodeURIComponent(path.slice('/messages/'.length)) : undefined,
      status: undefined,
      answered: false,
      receivedAt: Date.now(),
      providerAnsweredAt: undefined,
      answeredAt: undefined,
      parked: false,
      callerLeftAt: undefined,
    };
    this.requests.push(record);
    if (record.method === 'POST' && this.parkEvery > 0 && ++this.posts % this.parkEvery === 0) {
      record.parked = true;
      res.on('close', () => (record.callerLeftAt = Date.now()));
      req.resume();
      return;
    }
    const hold = record.method === 'POST' ? this.holdAnswersMs : 0;
    const headers = { ...req.headers };
    delete headers.connection;
    const upstream = request({ host: '127.0.0.1', port: this.upstreamPort, method: req.method, path, headers }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (c: Buffer) => chunks.push(c));
      answer.on('end', () => {
        record.status = answer.statusCode;
        record.providerAnsweredAt = Date.now();
        const pass = () => {
          if (res.destroyed) return;
          const out = { ...answer.headers };
          delete out.connection;
          delete out['keep-alive'];
          delete out['transfer-encoding'];
          res.writeHead(answer.statusCode ?? 502, out);
          res.end(Buffer.concat(chunks));
          record.answered = true;
          record.answeredAt = Date.now();
        };
        if (hold > 0) setTimeout(pass, hold);
        else pass();
      });
    });
    upstream.on('error', () => {
      if (!res.headersSent && !res.destroyed) res.destroy();
    });
    // The caller gave up (deadline, lease lost): the provider sees the abort too.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }
}
