import { ImapFlow } from 'imapflow';
import { describeError } from '@singleshot/core';
import { MAIL_LIMITS } from '../bounded-text';
import { pollFolder } from './poll-folder';
import { reconnectDelayMs } from './reconnect-backoff';
import type { ImapSourceDeps, ImapSourceOptions, PollResult } from './types';

export interface ImapSourceStatus {
  mailboxId: string;
  folder: string;
  connected: boolean;
  /** Failed connects since the last good one. */
  reconnectAttempts: number;
  lastPollAt?: number;
  lastError?: { name: string; code: string; message: string };
}

/**
 * Reads one mailbox folder over IMAP and hands every new message over, once
 * per UID, in UID order (imapflow). One connection per source; run one source
 * per configured mailbox.
 *
 * - IDLE (imapflow's auto-IDLE on the selected folder) wakes a poll as soon
 *   as the server reports new mail; a timer polls every `pollIntervalMs` as
 *   the safety net, because IDLE silently dies behind NATs and some servers
 *   end it without notice.
 * - Any disconnect (server restart, network, BYE, a deleted folder) closes
 *   the client; a new one connects after a jittered, capped exponential
 *   backoff, forever, logging each attempt. Mail that arrived meanwhile is
 *   past the cursor and is read by the first poll after reconnecting.
 * - Polls never overlap: triggers during a poll coalesce into one more poll.
 */
export class ImapSource {
  readonly mailboxId: string;
  readonly folder: string;
  private readonly opts: Required<Omit<ImapSourceOptions, 'tls' | 'reconnect'>> & Pick<ImapSourceOptions, 'tls' | 'reconnect'>;
  private client: ImapFlow | null = null;
  private connecting: Promise<ImapFlow> | null = null;
  private connectingClient: ImapFlow | null = null;
  private chain: Promise<unknown> = Promise.resolve();
  private queued = false;
  private started = false;
  private stopping = false;
  private pollTimer: NodeJS.Timeout | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private reconnectAttempts = 0;
  private lastPollAt: number | undefined;
  private lastError: ImapSourceStatus['lastError'];

  constructor(
    options: ImapSourceOptions,
    private readonly deps: ImapSourceDeps,
  ) {
    this.opts = {
      folder: 'INBOX',
      pollIntervalMs: 60_000,
      maxMessageBytes: MAIL_LIMITS.maxBytes,
      idle: true,
      batchMessages: 200,
      batchBytes: 16 * 1024 * 1024,
      connectTimeoutMs: 30_000,
      ...options,
    };
    this.mailboxId = options.mailboxId;
    this.folder = this.opts.folder;
  }

  private get log() {
    return { mailboxId: this.mailboxId, folder: this.folder, host: this.opts.host, port: this.opts.port };
  }

  /** Connects, polls at once, then on IDLE notifications and every `pollIntervalMs`. Never rejects. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.stopping = false;
    this.pollTimer = setInterval(() => this.trigger('timer'), this.opts.pollIntervalMs);
    try {
      await this.connect();
      this.trigger('start');
    } catch {
      // connect() logged it and scheduled the reconnect.
    }
  }

  /**
   * Stops polling and reconnecting, lets a running poll finish its current
   * hand-over (so the cursor matches what was handed over), then logs out.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.started = false;
    clearInterval(this.pollTimer);
    clearTimeout(this.reconnectTimer);
    this.pollTimer = undefined;
    this.reconnectTimer = undefined;
    // A connect in flight would otherwise hold stop() for the connect timeout.
    this.connectingClient?.close();
    await this.connecting?.catch(() => undefined);
    await this.chain.catch(() => undefined);
    const client = this.client;
    this.client = null;
    if (client && client.usable) {
      await client.logout().catch(() => client.close());
    } else {
      client?.close();
    }
    // Stopped for good: a later pollOnce()/start() works again.
    this.stopping = false;
    this.deps.logger.info({ ...this.log, event: 'imap_stopped' }, 'IMAP source stopped');
  }

  /**
   * Polls the folder once, after any running poll (polls never overlap), and
   * returns what it did. Connects first if needed. Rejects on IMAP or cursor
   * errors; a failed hand-over resolves with `pending > 0` instead.
   */
  pollOnce(): Promise<PollResult> {
    const run = this.chain.then(() => this.runPoll());
    this.chain = run.catch(() => undefined);
    return run;
  }

  status(): ImapSourceStatus {
    const s: ImapSourceStatus = {
      mailboxId: this.mailboxId,
      folder: this.folder,
      connected: !!this.client?.usable,
      reconnectAttempts: this.reconnectAttempts,
    };
    if (this.lastPollAt !== undefined) s.lastPollAt = this.lastPollAt;
    if (this.lastError) s.lastError = this.lastError;
    return s;
  }

  private trigger(reason: string): void {
    if (!this.started || this.stopping || this.queued) return;
    // While disconnected the reconnect loop owns connecting, and polls once it is back.
    if (!this.client?.usable && (this.reconnectTimer || this.reconnectAttempts > 0)) return;
    this.queued = true;
    const run = this.chain.then(async () => {
      this.queued = false;
      if (this.stopping) return;
      try {
        const result = await this.runPoll();
        if (result.handedOver > 0 || result.pending > 0 || result.rescanned) {
          this.deps.logger.info({ ...this.log, event: 'imap_poll', reason, ...result }, 'IMAP poll');
        }
      } catch (err) {
        this.lastError = describeError(err);
        this.deps.logger.warn({ ...this.log, event: 'imap_poll_failed', reason, err: this.lastError }, 'IMAP poll failed');
        if (!this.client?.usable) this.scheduleReconnect();
      }
    });
    this.chain = run.catch(() => undefined);
  }

  private async runPoll(): Promise<PollResult> {
    const client = await this.connect();
    const result = await pollFolder(
      client,
      { ...this.opts, mailboxId: this.mailboxId, folder: this.folder, isStopping: () => this.stopping },
      this.deps,
    );
    this.lastPollAt = Date.now();
    if (result.error) this.lastError = result.error;
    return result;
  }

  private newClient(): ImapFlow {
    const { host, port, secure, user, password, tls, idle, connectTimeoutMs } = this.opts;
    return new ImapFlow({
      host,
      port,
      secure,
      auth: { user, pass: password },
      ...(tls ? { tls } : {}),
      // Our own logger reports state changes; imapflow's would print every command.
      logger: false,
      disableAutoIdle: !idle,
      // IDLE starts after this much quiet; above the pause between FETCH batches.
      autoIdleDelay: 2000,
      connectionTimeout: connectTimeoutMs,
      greetingTimeout: Math.min(connectTimeoutMs, 16_000),
      clientInfo: { name: 'singleshot' },
    });
  }

  /** The usable client, connecting one if there is none. Rejects (and schedules a reconnect when running). */
  private connect(): Promise<ImapFlow> {
    if (this.client?.usable) return Promise.resolve(this.client);
    if (this.connecting) return this.connecting;
    const client = this.newClient();
    client.on('error', (err: Error) => {
      this.lastError = describeError(err);
      this.deps.logger.warn({ ...this.log, event: 'imap_connection_error', err: this.lastError }, 'IMAP connection error');
    });
    client.on('exists', (event: { count: number; prevCount: number }) => {
      if (event.count > event.prevCount) this.trigger('idle');
    });
    client.on('close', () => {
      if (this.client !== client) return;
      this.client = null;
      if (this.stopping) return;
      this.deps.logger.warn({ ...this.log, event: 'imap_connection_closed' }, 'IMAP connection closed');
      this.scheduleReconnect();
    });
    this.connectingClient = client;
    this.connecting = client
      .connect()
      .then(() => {
        if (this.stopping) {
          client.close();
          throw Object.assign(new Error('IMAP source stopped while connecting'), { code: 'STOPPED' });
        }
        this.client = client;
        if (this.reconnectAttempts > 0) {
          this.deps.logger.info({ ...this.log, event: 'imap_reconnected', attempts: this.reconnectAttempts }, 'IMAP reconnected');
        } else {
          this.deps.logger.info({ ...this.log, event: 'imap_connected', idle: this.opts.idle && client.capabilities.has('IDLE') }, 'IMAP connected');
        }
        this.reconnectAttempts = 0;
        return client;
      })
      .catch((err: unknown) => {
        client.close();
        this.lastError = describeError(err);
        if (!this.stopping) {
          this.deps.logger.warn({ ...this.log, event: 'imap_connect_failed', err: this.lastError, attempt: this.reconnectAttempts + 1 }, 'IMAP connect failed');
          this.scheduleReconnect();
        }
        throw err;
      })
      .finally(() => {
        this.connecting = null;
        this.connectingClient = null;
      });
    return this.connecting;
  }

  private scheduleReconnect(): void {
    if (!this.started || this.stopping || this.reconnectTimer) return;
    this.reconnectAttempts++;
    const delayMs = reconnectDelayMs(this.reconnectAttempts, this.opts.reconnect);
    this.deps.logger.info({ ...this.log, event: 'imap_reconnect_scheduled', attempt: this.reconnectAttempts, delayMs }, 'IMAP reconnect scheduled');
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.connect().then(
        () => this.trigger('reconnect'),
        () => undefined, // connect() logged it and scheduled the next attempt
      );
    }, delayMs);
  }
}
