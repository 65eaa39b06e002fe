/**
 * Ports and options of the IMAP source. Ports are narrow so tests (and the
 * ingest app) pass small object literals: the Redis cursor store, the
 * hand-over into the ingest pipeline, a pino-compatible logger.
 */

/** How far one folder was read (see `ImapCursorStore` in libs/store). */
export interface ImapCursorState {
  uidValidity: string;
  lastUid: number;
}

/** The cursor store, as the source uses it. `ImapCursorStore` fits. */
export interface ImapCursorPort {
  get(mailboxId: string, folder: string): Promise<ImapCursorState | null>;
  /** Atomic: only forward under one UIDVALIDITY; replaces the pair when it changes. */
  advance(mailboxId: string, folder: string, uidValidity: string, uid: number): Promise<unknown>;
}

/** What the source knows about a message it hands over. */
export interface HandOverMeta {
  mailboxId: string;
  folder: string;
  /** A cursor position only, never identity (it changes on COPY/MOVE). */
  uid: number;
  uidValidity: string;
  /** True when the message was over `maxMessageBytes`: `raw` is its header block only. */
  truncated: boolean;
  /** Size of the whole message on the server (RFC822.SIZE). */
  sizeBytes: number;
  /** Why `raw` is partial; set when `truncated`. */
  note?: string;
  /** When the server received the message (INTERNALDATE), ISO 8601. */
  internalDate?: string;
}

/**
 * Hands one message to ingest. Must resolve only after the message's decide
 * job is durably in Redis (ack after effect): the cursor moves past the UID
 * only then. A rejection stops the batch; the message is retried next poll.
 */
export type HandOver = (raw: Buffer, meta: HandOverMeta) => Promise<unknown>;

/** pino-compatible subset. */
export interface ImapLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface ImapSourceDeps {
  cursor: ImapCursorPort;
  handOver: HandOver;
  logger: ImapLogger;
  /**
   * Age in seconds of the oldest message of the folder not yet handed over
   * (0 when caught up), after every poll. For a lag gauge.
   */
  onLag?(mailboxId: string, seconds: number): void;
}

export interface ImapSourceOptions {
  /** Configured mailbox id: part of every message key. */
  mailboxId: string;
  host: string;
  port: number;
  /** Implicit TLS (993). When false, STARTTLS is used if the server offers it. */
  secure: boolean;
  user: string;
  /** Already resolved (the config lib reads `passwordFile`). */
  password: string;
  /** Default `INBOX`. */
  folder?: string;
  /** The safety-net poll, also when IDLE runs. Default 60 000. */
  pollIntervalMs?: number;
  /** Larger messages are handed over as their header block, with a note. Default 25 MiB. */
  maxMessageBytes?: number;
  /** Use IDLE when the server supports it. Default true. */
  idle?: boolean;
  tls?: { rejectUnauthorized?: boolean; servername?: string };
  /** Reconnect backoff after any disconnect: exponential, jittered, capped. */
  reconnect?: { initialDelayMs?: number; maxDelayMs?: number };
  /** Messages fetched per FETCH command (bounded by `batchBytes` too). Default 200. */
  batchMessages?: number;
  /** Bytes (by RFC822.SIZE) fetched per FETCH command. Default 16 MiB. */
  batchBytes?: number;
  /** TCP+TLS connect budget. Default 30 000. */
  connectTimeoutMs?: number;
}

/** What one poll of the folder did. */
export interface PollResult {
  mailboxId: string;
  folder: string;
  uidValidity: string;
  /** Messages handed over (and acknowledged in the cursor) by this poll. */
  handedOver: number;
  /** Of those, how many were over the size cap (header block only). */
  truncated: number;
  /** The cursor after the poll. */
  lastUid: number;
  /** True when UIDVALIDITY changed (or no cursor existed) and the folder was read from UID 1. */
  rescanned: boolean;
  /** Messages seen but not handed over because a hand-over failed; retried next poll. */
  pending: number;
  /** The hand-over error that stopped the batch, if any. */
  error?: { name: string; code: string; message: string };
}
