/**
 * The provider port: the one narrow interface delivery talks to. A provider
 * knows nothing of queues, locks or fences; it sends one rendered message with
 * the operation key as its idempotency key and says, through the error class it
 * throws, what happened (see `classify.ts`).
 */

/** One rendered notification for one recipient on one channel. */
export interface SendRequest {
  /** Idempotency key given to the provider; identical on every attempt (docs/protocol.md invariant 6). */
  operationKey: string;
  messageKey: string;
  recipient: string;
  channel: string;
  subject: string;
  text: string;
  /** HTML body; email then goes out as multipart text + HTML. */
  html?: string;
  /** Files to attach (email); other channels get `documents` links instead. */
  attachments?: Attachment[];
  /** The operation's documents, each with a time-limited link (webhook payloads carry these). */
  documents?: DocumentLink[];
  data: Record<string, unknown>;
}

/** A generated document attached to an email. */
export interface Attachment {
  fileName: string;
  contentType: string;
  content: Buffer;
}

/** A generated document as a link (too large to attach, or a channel without attachments). */
export interface DocumentLink {
  name: string;
  fileName: string;
  contentType: string;
  size: number;
  /** sha256 hex of the bytes. */
  checksum: string;
  /** Time-limited signed URL. */
  url: string;
  expiresAt: string;
  /** True when the file is attached to this message too. */
  attached: boolean;
}

export interface CallContext {
  /** Aborts the call (shutdown, lost lease). An abort after the request left is in doubt. */
  signal: AbortSignal;
  /** Hard deadline for this call, ms from now; the caller computes it inside the remaining lease. */
  timeoutMs: number;
}

export interface SendResult {
  /** The provider's id for the accepted message; never empty (an answer without one is in doubt). */
  externalId: string;
  /** Short human-readable note for the journal (status line, SMTP queue reply). */
  detail?: string;
}

export type LookupResult = { found: true; externalId: string } | { found: false };

export interface Provider {
  readonly name: string;
  readonly type: 'http' | 'smtp' | 'log';
  /** Throws RetryableError | PermanentError | InDoubtError (from @singleshot/core). */
  send(req: SendRequest, ctx: CallContext): Promise<SendResult>;
  /**
   * Present only when the provider can look an idempotency key up (reconcile in-doubt).
   * Never guesses: any answer other than a clear "have it" / "never had it" throws RetryableError.
   */
  lookup?(operationKey: string, ctx: CallContext): Promise<LookupResult>;
  /** Stops taking sends, waits for the ones in flight (each bounded by its deadline), frees sockets. */
  close(): Promise<void>;
}

/** Where a provider may write a warning; pino's logger fits, so does `{ warn() {} }`. */
export interface ProviderLogger {
  warn(obj: object, msg?: string): void;
}

export interface ProviderDeps {
  logger?: ProviderLogger;
}

/** `type: http` — see docs/contract.md "Outbound HTTP provider". */
export interface HttpProviderOptions {
  name: string;
  type: 'http';
  /** Endpoint that takes `POST` with the JSON body. */
  url: string;
  /** Base of `GET <lookupUrl>/<operation key>`; without it the provider has no `lookup`. */
  lookupUrl?: string;
  /** Upper bound of one call, whatever the caller allows. Default 10000. */
  timeoutMs?: number;
  /** Extra request headers (auth tokens). Cannot override Content-Type or Idempotency-Key. */
  headers?: Record<string, string>;
}

/** `type: smtp` — a relay reached with plain SMTP (no lookup is possible). */
export interface SmtpProviderOptions {
  name: string;
  type: 'smtp';
  host: string;
  port: number;
  /** TLS from the first byte (port 465). Otherwise STARTTLS is used when offered. */
  secure: boolean;
  user?: string;
  password?: string;
  /** Header From; also the envelope sender. `"Name" <addr@domain>` is accepted. */
  from: string;
  /** Right side of the Message-ID we set. Default: the domain of `from`. */
  messageIdDomain?: string;
  /** Upper bound of one call, whatever the caller allows. Default 10000. */
  timeoutMs?: number;
  /** Fail rather than send in clear text when the server does not offer STARTTLS. */
  requireTls?: boolean;
}

/** `type: log` — appends one NDJSON line per send; for development and audits. */
export interface LogProviderOptions {
  name: string;
  type: 'log';
  path: string;
}

export type ProviderOptions = HttpProviderOptions | SmtpProviderOptions | LogProviderOptions;

/** Used when neither the options nor the caller say otherwise. */
export const DEFAULT_PROVIDER_TIMEOUT_MS = 10_000;
