import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { waitUntil } from './free-port';

/**
 * A scripted stand-in for a vendor API (SES, SendGrid, Twilio, Slack) on
 * 127.0.0.1, speaking that vendor's documented request and response shapes
 * (the `FakeDialect`). Unlike the http sink, it behaves like the real
 * vendors: none of them deduplicates, so a second request for the same
 * operation is a second message (`accepted.get(key).count` of 2 is a
 * duplicate a test must catch).
 *
 * Faults, per request (recipient queue, then global queue, then chooser, then 'ok'):
 * `down()` refuses connections; 'reset' destroys the socket once the request
 * is read (in doubt to the client); 'accept-then-drop' takes the message and
 * never answers; 'hang' never answers; the vendor's own error answers are
 * 'throttle' (429), 'server-error' (500), 'unavailable' (503),
 * 'invalid-recipient' and 'auth' (its permanent 4xx), or any raw answer.
 */
export type FakeFault = 'throttle' | 'server-error' | 'unavailable' | 'invalid-recipient' | 'auth';
export type FakeBehaviour =
  | 'ok'
  | 'accept-then-drop'
  | 'hang'
  | 'reset'
  | FakeFault
  | { status: number; body?: unknown; headers?: Record<string, string> };

export interface FakeAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** How one vendor's requests are read and answered. */
export interface FakeDialect {
  /** Reads a request: the dedup key and recipient of a send, or the vendor's answer to a bad one. */
  parse(req: { method: string; path: string; headers: IncomingHttpHeaders; rawBody: string }): { key: string; recipient: string; body: unknown } | FakeAnswer;
  /** The answer to an accepted send; `id` is the new message's id. */
  accepted(id: string, parsed: { key: string; recipient: string; body: unknown }): FakeAnswer;
  /** A new message id in the vendor's format. */
  newId(n: number): string;
  fault(kind: FakeFault, recipient: string): FakeAnswer;
  /** Routes other than the send (lookups), answered from what was taken; undefined: not one of them. */
  route?(req: { method: string; path: string; headers: IncomingHttpHeaders; rawBody: string }, taken: ReadonlyMap<string, FakeAcceptance>): FakeAnswer | undefined;
}

export interface FakeRequest {
  seq: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  body: unknown;
  key: string;
  recipient: string;
  behaviour: FakeBehaviour;
}

export interface FakeAcceptance {
  /** Ids of every copy taken, first first. */
  ids: string[];
  /** Copies taken for this key (1 for "exactly once"). */
  count: number;
  body: unknown;
}

export interface FakeProviderApi {
  /** `http://127.0.0.1:<port>`: the provider's `endpoint` base. */
  readonly origin: string;
  readonly port: number;
  /** Every request the dialect could read as a send, in arrival order. */
  readonly requests: FakeRequest[];
  /** Requests the dialect refused (bad auth, bad shape), with the answer. */
  readonly rejected: Array<{ path: string; answer: FakeAnswer }>;
  /** Requests to the dialect's other routes (lookups), in arrival order. */
  readonly others: Array<{ path: string; body: string; answer: FakeAnswer }>;
  readonly accepted: Map<string, FakeAcceptance>;
  script(...behaviours: FakeBehaviour[]): void;
  scriptFor(recipient: string, ...behaviours: FakeBehaviour[]): void;
  behave(fn: ((req: FakeRequest) => FakeBehaviour | undefined) | undefined): void;
  countFor(key: string): number;
  waitFor<T>(check: (api: FakeProviderApi) => T, options?: { timeoutMs?: number; what?: string }): Promise<NonNullable<T>>;
  /** Refuses connections (ECONNREFUSED) until `up()`; state is kept. */
  down(): Promise<void>;
  up(): Promise<void>;
  reset(): void;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function answer(res: ServerResponse, a: FakeAnswer): void {
  const text = a.body === undefined ? '' : typeof a.body === 'string' ? a.body : JSON.stringify(a.body);
  res.writeHead(a.status, { ...(text ? { 'content-type': 'application/json' } : {}), ...a.headers });
  res.end(text);
}

const isAnswer = (v: object): v is FakeAnswer => 'status' in v;

export async function startFakeProviderApi(dialect: FakeDialect): Promise<FakeProviderApi> {
  const requests: FakeRequest[] = [];
  const rejected: Array<{ path: string; answer: FakeAnswer }> = [];
  const others: Array<{ path: string; body: string; answer: FakeAnswer }> = [];
  const accepted = new Map<string, FakeAcceptance>();
  const globalQueue: FakeBehaviour[] = [];
  const recipientQueues = new Map<string, FakeBehaviour[]>();
  const sockets = new Set<Socket>();
  let chooser: ((req: FakeRequest) => FakeBehaviour | undefined) | undefined;
  let nextId = 1;

  const accept = (req: FakeRequest): string => {
    const id = dialect.newId(nextId++);
    const entry = accepted.get(req.key);
    if (entry) {
      entry.count += 1;
      entry.ids.push(id);
    } else accepted.set(req.key, { ids: [id], count: 1, body: req.body });
    return id;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const rawBody = await readBody(req);
    const path = req.url ?? '/';
    const other = dialect.route?.({ method: req.method ?? 'GET', path, headers: req.headers, rawBody }, accepted);
    if (other) {
      others.push({ path, body: rawBody, answer: other });
      return answer(res, other);
    }
    const parsed = dialect.parse({ method: req.method ?? 'GET', path, headers: req.headers, rawBody });
    if (isAnswer(parsed)) {
      rejected.push({ path, answer: parsed });
      return answer(res, parsed);
    }
    const record: FakeRequest = { seq: requests.length + 1, method: req.method ?? 'GET', path, headers: req.headers, rawBody, ...parsed, behaviour: 'ok' };
    requests.push(record);
    const own = recipientQueues.get(record.recipient);
    record.behaviour = own?.shift() ?? globalQueue.shift() ?? chooser?.(record) ?? 'ok';
    const b = record.behaviour;
    if (typeof b === 'object') return answer(res, b);
    switch (b) {
      case 'ok':
        return answer(res, dialect.accepted(accept(record), parsed));
      case 'accept-then-drop':
        accept(record);
        res.socket?.destroy();
        return;
      case 'hang':
        return;
      case 'reset':
        res.socket?.destroy();
        return;
      default:
        return answer(res, dialect.fault(b, record.recipient));
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent && !res.destroyed) answer(res, { status: 500, body: { error: String(err) } });
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        const address = server.address();
        resolve(typeof address === 'object' && address ? address.port : port);
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (!server.listening) return resolve();
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  const port = await listen(0);

  const api: FakeProviderApi = {
    origin: `http://127.0.0.1:${port}`,
    port,
    requests,
    rejected,
    others,
    accepted,
    script: (...b) => void globalQueue.push(...b),
    scriptFor(recipient, ...b) {
      recipientQueues.set(recipient, [...(recipientQueues.get(recipient) ?? []), ...b]);
    },
    behave(fn) {
      chooser = fn;
    },
    countFor: (key) => requests.filter((r) => r.key === key).length,
    waitFor: (check, { timeoutMs = 10_000, what = 'the fake provider condition' } = {}) => waitUntil(() => check(api), what, { timeoutMs, intervalMs: 20 }),
    down: stop,
    async up() {
      if (!server.listening) await listen(port);
    },
    reset() {
      requests.length = 0;
      rejected.length = 0;
      others.length = 0;
      accepted.clear();
      globalQueue.length = 0;
      recipientQueues.clear();
      chooser = undefined;
    },
    close: stop,
  };
  return api;
}
