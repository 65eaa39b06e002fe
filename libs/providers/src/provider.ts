/**
 * The provider port: the one narrow interface delivery talks to. A provider
 * knows nothing of queues, locks or fences; it sends one rendered message with
 * the operation key as its idempotency key and says, through the error class it
 * throws, what happened (see `classify.ts`).
 */
import type { ProviderInput, ProviderType } from '@singleshot/config';
import type { ListUnsubscribe } from './list-unsubscribe';

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
  /** One-click unsubscribe of an email of a route with a category; email providers add its headers, others ignore it. */
  listUnsubscribe?: ListUnsubscribe;
  data: Record<string, unknown>;
  /** The route that made the operation (a provider may pick per-route settings by it, e.g. a WhatsApp template). */
  route?: string;
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
  readonly signal: AbortSignal;
  /** Hard deadline for this call, ms from now; the caller computes it inside the remaining lease. */
  timeoutMs: number;
  /**
   * The latest moment (ms since epoch) this call may still start or run: the
   * end of `timeoutMs` counted from when the caller computed it, so time lost
   * before the call starts (a stalled process) comes off the call's budget
   * instead of pushing the call past the caller's lease.
   */
  endsAt?: number;
  /**
   * The same cancellation as `signal`, as a callback: a transport that listens
   * here never reads `signal`, which the caller can then make on first read
   * (creating an AbortSignal cost more than the rest of a call's deadline).
   * Optional; `signal` alone always works.
   */
  cancel?: CallerCancel;
}

/** A caller's cancellation as a callback (see `CallContext.cancel`). */
export interface CallerCancel {
  /** The reason, once the caller cancelled. */
  cancelled(): Error | undefined;
  /** Runs `listener` once when the caller cancels (at once if it did); one listener at a time. */
  onCancel(listener: (reason: Error) => void): void;
  /** Forgets `listener` if it is the one set. */
  offCancel(listener: (reason: Error) => void): void;
}

export interface SendResult {
  /** The provider's id for the accepted message; never empty (an answer without one is in doubt). */
  externalId: string;
  /** Short human-readable note for the journal (status line, SMTP queue reply). */
  detail?: string;
}

export type LookupResult = { found: true; externalId: string } | { found: false };

/**
 * Where a copy of the operation could be, for providers that can only search
 * a recipient's messages (Slack): the recipient, and an instant no copy can be
 * older than (the message's first arrival).
 */
export interface LookupTarget {
  recipient: string;
  since: number;
  /**
   * What the operation sends (the same on every attempt), for providers that
   * can only recognize a copy by its content (Twilio keeps nothing of ours on
   * a message).
   */
  content?: { route: string; text: string; subject: string; data: Record<string, unknown> };
}

export interface Provider {
  readonly name: string;
  readonly type: ProviderType;
  /** Throws RetryableError | PermanentError | InDoubtError (from @singleshot/core). */
  send(req: SendRequest, ctx: CallContext): Promise<SendResult>;
  /**
   * Present only when the provider can look an idempotency key up (reconcile in-doubt).
   * Never guesses: any answer other than a clear "have it" / "never had it" throws RetryableError.
   */
  lookup?(operationKey: string, ctx: CallContext, target?: LookupTarget): Promise<LookupResult>;
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

export type {
  HttpProviderConfig,
  LogProviderConfig,
  SendgridProviderConfig,
  SesProviderConfig,
  SlackProviderConfig,
  SmtpProviderConfig,
  TwilioSmsProviderConfig,
  TwilioWhatsappProviderConfig,
} from '@singleshot/config';

/**
 * Provider options are the config file's provider entries: the types are
 * inferred from the zod schemas in @singleshot/config, and the defaults
 * (timeouts, ports, endpoints) live only there. Constructors take the entry as
 * written (`z.input`, defaults optional) and fill the defaults by parsing it
 * (see `resolveOptions`), so a provider built by hand behaves like one built
 * from a config file.
 */
export type ProviderOptions = ProviderInput;
export type HttpProviderOptions = Extract<ProviderInput, { type: 'http' }>;
export type SmtpProviderOptions = Extract<ProviderInput, { type: 'smtp' }>;
export type LogProviderOptions = Extract<ProviderInput, { type: 'log' }>;
export type SesProviderOptions = Extract<ProviderInput, { type: 'ses' }>;
export type SendgridProviderOptions = Extract<ProviderInput, { type: 'sendgrid' }>;
export type TwilioSmsProviderOptions = Extract<ProviderInput, { type: 'twilio-sms' }>;
export type TwilioWhatsappProviderOptions = Extract<ProviderInput, { type: 'twilio-whatsapp' }>;
export type SlackProviderOptions = Extract<ProviderInput, { type: 'slack' }>;
