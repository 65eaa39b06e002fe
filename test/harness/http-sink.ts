import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { waitUntil } from './free-port';

/**
 * A real HTTP notification provider for tests, on 127.0.0.1 (ephemeral port).
 * It implements the provider side of docs/contract.md "Outbound HTTP provider" as an
 * idempotent provider would:
 *
 * - `POST /send` with `Idempotency-Key`: records the request; on acceptance
 *   answers `200 {"id"}` — the SAME id again for a key it already accepted.
 * - `GET /messages/:key`: `200 {"id"}` if that key was accepted, else `404`.
 *
 * What it does with each POST is scripted (see {@link HttpBehaviour}); the
 * first of these that yields a behaviour wins:
 * 1. the recipient's queue (`scriptFor(recipient, …)`), one entry per request,
 * 2. the global queue (`script(…)`), one entry per request,
 * 3. the `behave(fn)` chooser,
 * 4. `'ok'`.
 *
 * `requests` holds every POST in arrival order; `accepted` holds what the
 * provider took (key → id and how many POSTs it accepted for that key), which
 * is what "exactly one notification" is asserted on.
 */
export type HttpBehaviour =
  /** Accept (or re-accept the same key) and answer 200 {id}. */
  | 'ok'
  /** Accept, but answer 200 {} — an ambiguous success a client must not trust. */
  | 'no-id'
  /** Accept, then destroy the socket without answering (the answer is "lost"). */
  | 'accept-then-drop'
  /** Accept, then never answer until the sink closes. */
  | 'accept-then-hang'
  /** Do not accept; never answer until the sink closes. */
  | 'hang'
  /**
   * Do not accept; destroy the socket as soon as the request is read. From the
   * client's side this is a reset after its request was written (in doubt);
   * lookup then says 404. For a real ECONNREFUSED use `down()`.
   */
  | 'refuse'
  /** Answer this status/body/headers; records acceptance only with `accept: true` (body then defaults to {id}). */
  | { status: number; body?: unknown; headers?: Record<string, string>; accept?: boolean }
  /** Wait, then behave as `then`. */
  | { delayMs: number; then: HttpBehaviour };

export interface SinkRequest {
  /** 1-based arrival number. */
  seq: number;
  method: string;
  path: string;
  idempotencyKey: string | undefined;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body, or undefined when it was not JSON. */
  body: unknown;
  rawBody: string;
  recipient: string | undefined;
  behaviour: HttpBehaviour;
  receivedAt: number;
}

export interface SinkAcceptance {
  id: string;
  /** How many POSTs for this key the provider accepted (1 for "exactly once"). */
  count: number;
  /** Body of the first accepted POST. */
  body: unknown;
}

export interface HttpSink {
  /** `http://127.0.0.1:<port>/send` — the provider's `url`. */
  readonly url: string;
  /** `http://127.0.0.1:<port>/messages` — the provider's `lookupUrl`. */
  readonly lookupUrl: string;
  readonly port: number;
  /** Every `POST /send`, in arrival order. */
  readonly requests: SinkRequest[];
  /** Every `GET /messages/:key`, in arrival order. */
  readonly lookups: Array<{ key: string; found: boolean }>;
  /** Accepted idempotency keys. */
  readonly accepted: Map<string, SinkAcceptance>;
  /** Sets (or clears) the chooser used when no queued behaviour applies. */
  behave(fn: ((req: SinkRequest) => HttpBehaviour | undefined) | undefined): void;
  /** Queues behaviours for the next POSTs, whoever they are for. */
  script(...behaviours: HttpBehaviour[]): void;
  /** Queues behaviours for the next POSTs to one recipient. */
  scriptFor(recipient: string, ...behaviours: HttpBehaviour[]): void;
  /** POSTs received with this key (accepted or not). */
  countFor(key: string): number;
  /** Bounded polling until `check(sink)` is truthy; throws after `timeoutMs` (default 10 s). */
  waitFor<T>(check: (sink: HttpSink) => T, options?: { timeoutMs?: number; what?: string }): Promise<NonNullable<T>>;
  /**
   * Stops listening and cuts every connection; new connections get ECONNREFUSED. State is kept.
   * A client that reuses a keep-alive socket before it notices the cut sees a reset after its
   * write (in doubt) instead; use a fresh provider when a test needs ECONNREFUSED exactly.
   */
  down(): Promise<void>;
  /** Listens again on the same port after `down()`. */
  up(): Promise<void>;
  /** Forgets requests, acceptances, scripts and the chooser. */
  reset(): void;
  /** Cuts every connection (hanging ones too) and stops the server. */
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

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(text);
}

/** Starts a sink; `close()` it in `afterAll`/`afterEach`. */
export async function startHttpSink(): Promise<HttpSink> {
  const requests: SinkRequest[] = [];
  const lookups: Array<{ key: string; found: boolean }> = [];
  const accepted = new Map<string, SinkAcceptance>();
  const globalQueue: HttpBehaviour[] = [];
  const recipientQueues = new Map<string, HttpBehaviour[]>();
  const sockets = new Set<Socket>();
  let chooser: ((req: SinkRequest) => HttpBehaviour | undefined) | undefined;
  let nextId = 1;

  const accept = (key: string, body: unknown): SinkAcceptance => {
    const existing = accepted.get(key);
    if (existing) {
      existing.count += 1;
      return existing;
    }
    const entry = { id: `sink-${nextId++}`, count: 1, body };
    accepted.set(key, entry);
    return entry;
  };

  const apply = async (behaviour: HttpBehaviour, req: SinkRequest, res: ServerResponse): Promise<void> => {
    const key = req.idempotencyKey as string;
    if (typeof behaviour === 'object' && 'delayMs' in behaviour) {
      await new Promise((r) => setTimeout(r, behaviour.delayMs));
      if (res.destroyed) return;
      return apply(behaviour.then, req, res);
    }
    if (typeof behaviour === 'object') {
      const entry = behaviour.accept ? accept(key, req.body) : undefined;
      const body = behaviour.body === undefined && entry ? { id: entry.id } : behaviour.body;
      return sendJson(res, behaviour.status, body, behaviour.headers);
    }
    switch (behaviour) {
      case 'ok':
        return sendJson(res, 200, { id: accept(key, req.body).id });
      case 'no-id':
        accept(key, req.body);
        return sendJson(res, 200, {});
      case 'accept-then-drop':
        accept(key, req.body);
        res.socket?.destroy();
        return;
      case 'accept-then-hang':
        accept(key, req.body);
        return;
      case 'hang':
        return;
      case 'refuse':
        res.socket?.destroy();
        return;
    }
  };

  const choose = (req: SinkRequest): HttpBehaviour => {
    const own = req.recipient ? recipientQueues.get(req.recipient) : undefined;
    return own?.shift() ?? globalQueue.shift() ?? chooser?.(req) ?? 'ok';
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0] as string;
    if (req.method === 'GET' && path.startsWith('/messages/')) {
      const key = decodeURIComponent(path.slice('/messages/'.length));
      const entry = accepted.get(key);
      lookups.push({ key, found: Boolean(entry) });
      return entry ? sendJson(res, 200, { id: entry.id }) : sendJson(res, 404, { error: 'not found' });
    }
    if (req.method !== 'POST' || path !== '/send') return sendJson(res, 404, { error: 'no such route' });

    const rawBody = await readBody(req);
    let body: unknown;
    try {
      body = JSON.parse(rawBody);
    } catch {
      body = undefined;
    }
    const keyHeader = req.headers['idempotency-key'];
    const recipient = (body as { recipient?: unknown } | undefined)?.recipient;
    const record: SinkRequest = {
      seq: requests.length + 1,
      method: req.method,
      path,
      idempotencyKey: typeof keyHeader === 'string' && keyHeader ? keyHeader : undefined,
      headers: req.headers,
      body,
      rawBody,
      recipient: typeof recipient === 'string' ? recipient : undefined,
      behaviour: 'ok',
      receivedAt: Date.now(),
    };
    requests.push(record);
    if (!record.idempotencyKey) return sendJson(res, 400, { error: 'Idempotency-Key header is required' });
    if (body === undefined) return sendJson(res, 400, { error: 'body is not JSON' });
    record.behaviour = choose(record);
    await apply(record.behaviour, record, res);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent && !res.destroyed) sendJson(res, 500, { error: String(err) });
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
  const origin = `http://127.0.0.1:${port}`;

  const sink: HttpSink = {
    url: `${origin}/send`,
    lookupUrl: `${origin}/messages`,
    port,
    requests,
    lookups,
    accepted,
    behave(fn) {
      chooser = fn;
    },
    script(...behaviours) {
      globalQueue.push(...behaviours);
    },
    scriptFor(recipient, ...behaviours) {
      const queue = recipientQueues.get(recipient) ?? [];
      queue.push(...behaviours);
      recipientQueues.set(recipient, queue);
    },
    countFor(key) {
      return requests.filter((r) => r.idempotencyKey === key).length;
    },
    waitFor(check, { timeoutMs = 10_000, what = 'the HTTP sink condition' } = {}) {
      return waitUntil(() => check(sink), what, { timeoutMs, intervalMs: 20 });
    },
    down: stop,
    async up() {
      if (!server.listening) await listen(port);
    },
    reset() {
      requests.length = 0;
      lookups.length = 0;
      accepted.clear();
      globalQueue.length = 0;
      recipientQueues.clear();
      chooser = undefined;
    },
    close: stop,
  };
  return sink;
}
