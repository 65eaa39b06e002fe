import type { Socket } from 'node:net';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import { waitUntil } from './free-port';

/**
 * A real SMTP relay for tests (`smtp-server` on 127.0.0.1, ephemeral port, no
 * TLS). It records every message whose content it read, with the envelope, the
 * raw text and the parsed headers (Message-ID first of all), and can be
 * scripted per transaction:
 *
 * - `'ok'` — answer 250 `OK: queued as sink-<n>`.
 * - `{ reject: 'rcpt', code }` — refuse the recipient (e.g. 550 unknown user, 451 try later).
 * - `{ reject: 'data', code }` — read the message, then refuse it after the final dot.
 * - `'accept-then-drop'` — read and keep the message, then cut the connection
 *   before the final reply (the client cannot know it was taken).
 * - `'hang'` — read the message and never answer until the sink closes.
 *
 * The behaviour is chosen once per transaction, at its first RCPT TO: the
 * recipient's queue (`scriptFor`), else the global queue (`script`), else the
 * `behave(fn)` chooser, else `'ok'`.
 *
 * `auth` makes the sink require AUTH PLAIN/LOGIN with those credentials (over
 * plain text; tests only).
 */
export type SmtpBehaviour =
  | 'ok'
  | { reject: 'rcpt' | 'data'; code: number; message?: string }
  | 'accept-then-drop'
  | 'hang';

export interface SmtpSinkMessage {
  seq: number;
  envelope: { from: string; to: string[] };
  raw: string;
  /** Lower-cased header name → unfolded values, in order. */
  headers: Map<string, string[]>;
  /** The Message-ID header exactly as sent (with angle brackets), if any. */
  messageId: string | undefined;
  subject: string | undefined;
  behaviour: SmtpBehaviour;
  /** accepted: answered 250; dropped: kept, connection cut before the reply; rejected / hung: not taken. */
  outcome: 'accepted' | 'dropped' | 'rejected' | 'hung';
}

export interface SmtpSinkRejection {
  stage: 'rcpt';
  address: string;
  code: number;
}

export interface SmtpSink {
  readonly host: '127.0.0.1';
  readonly port: number;
  /** Every message whose content was read, in order. */
  readonly messages: SmtpSinkMessage[];
  /** Recipients refused at RCPT TO. */
  readonly rejections: SmtpSinkRejection[];
  /** Messages the relay took (accepted or dropped after taking them). */
  taken(): SmtpSinkMessage[];
  behave(fn: ((tx: { from: string; to: string }) => SmtpBehaviour | undefined) | undefined): void;
  script(...behaviours: SmtpBehaviour[]): void;
  scriptFor(recipient: string, ...behaviours: SmtpBehaviour[]): void;
  /** Bounded polling until `check(sink)` is truthy; throws after `timeoutMs` (default 10 s). */
  waitFor<T>(check: (sink: SmtpSink) => T, options?: { timeoutMs?: number; what?: string }): Promise<NonNullable<T>>;
  reset(): void;
  /** Cuts every connection (hanging ones too) and stops the server. */
  close(): Promise<void>;
}

function smtpError(code: number, message: string): Error & { responseCode: number } {
  return Object.assign(new Error(message), { responseCode: code });
}

/** Parses the header block of a raw message (unfolding continuation lines). */
export function parseHeaders(raw: string): Map<string, string[]> {
  const end = raw.search(/\r?\n\r?\n/);
  const block = (end === -1 ? raw : raw.slice(0, end)).replace(/\r?\n[ \t]+/g, ' ');
  const headers = new Map<string, string[]>();
  for (const line of block.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
  }
  return headers;
}

export async function startSmtpSink(options: { auth?: { user: string; password: string } } = {}): Promise<SmtpSink> {
  const messages: SmtpSinkMessage[] = [];
  const rejections: SmtpSinkRejection[] = [];
  const globalQueue: SmtpBehaviour[] = [];
  const recipientQueues = new Map<string, SmtpBehaviour[]>();
  // Transaction → behaviour; keyed by session id and its transaction number.
  const chosen = new Map<string, SmtpBehaviour>();
  // Client port → socket, to cut a connection from inside a session handler.
  const sockets = new Map<number, Socket>();
  let chooser: ((tx: { from: string; to: string }) => SmtpBehaviour | undefined) | undefined;
  const txKey = (session: SMTPServerSession) => `${session.id}/${session.transaction}`;

  const server = new SMTPServer({
    secure: false,
    disabledCommands: options.auth ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    authOptional: !options.auth,
    allowInsecureAuth: true,
    logger: false,
    closeTimeout: 100,
    disableReverseLookup: true,
    onAuth(auth, _session, callback) {
      const ok = options.auth && auth.username === options.auth.user && auth.password === options.auth.password;
      if (ok) return callback(null, { user: auth.username });
      return callback(smtpError(535, 'Authentication credentials invalid'));
    },
    onRcptTo(address, session, callback) {
      const key = txKey(session);
      let behaviour = chosen.get(key);
      if (!behaviour) {
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        behaviour =
          recipientQueues.get(address.address)?.shift() ??
          globalQueue.shift() ??
          chooser?.({ from, to: address.address }) ??
          'ok';
        chosen.set(key, behaviour);
      }
      if (typeof behaviour === 'object' && behaviour.reject === 'rcpt') {
        rejections.push({ stage: 'rcpt', address: address.address, code: behaviour.code });
        chosen.delete(key);
        return callback(smtpError(behaviour.code, behaviour.message ?? `Recipient refused (${behaviour.code})`));
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const key = txKey(session);
        const behaviour = chosen.get(key) ?? 'ok';
        chosen.delete(key);
        const raw = Buffer.concat(chunks).toString('utf8');
        const headers = parseHeaders(raw);
        const message: SmtpSinkMessage = {
          seq: messages.length + 1,
          envelope: {
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
          },
          raw,
          headers,
          messageId: headers.get('message-id')?.[0],
          subject: headers.get('subject')?.[0],
          behaviour,
          outcome: 'accepted',
        };
        messages.push(message);
        if (behaviour === 'accept-then-drop') {
          message.outcome = 'dropped';
          sockets.get(session.remotePort)?.destroy();
          return;
        }
        if (behaviour === 'hang') {
          message.outcome = 'hung';
          return;
        }
        if (typeof behaviour === 'object') {
          message.outcome = 'rejected';
          return callback(smtpError(behaviour.code, behaviour.message ?? `Message refused (${behaviour.code})`));
        }
        callback(null, `OK: queued as sink-${message.seq}`);
      });
    },
  });
  server.server.on('connection', (socket: Socket) => {
    const port = socket.remotePort;
    if (port === undefined) return;
    sockets.set(port, socket);
    socket.on('close', () => sockets.delete(port));
  });
  // A client that vanishes mid-session surfaces here; it is part of what tests do.
  server.on('error', () => undefined);

  const port = await new Promise<number>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.server.off('error', reject);
      const address = server.server.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    });
  });

  const sink: SmtpSink = {
    host: '127.0.0.1',
    port,
    messages,
    rejections,
    taken: () => messages.filter((m) => m.outcome === 'accepted' || m.outcome === 'dropped'),
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
    waitFor(check, { timeoutMs = 10_000, what = 'the SMTP sink condition' } = {}) {
      return waitUntil(() => check(sink), what, { timeoutMs, intervalMs: 20 });
    },
    reset() {
      messages.length = 0;
      rejections.length = 0;
      globalQueue.length = 0;
      recipientQueues.clear();
      chosen.clear();
      chooser = undefined;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets.values()) socket.destroy();
        server.close(() => resolve());
      }),
  };
  return sink;
}
