import { Readable } from 'node:stream';
import { MAILGUN_OPERATION_VARIABLE } from './feedback/mailgun-feedback';
import { POSTMARK_OPERATION_METADATA } from './feedback/postmark-feedback';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import MailComposer from 'nodemailer/lib/mail-composer';
import addressparser from 'nodemailer/lib/addressparser';
import { PermanentError, ValidationError } from '@singleshot/core';
import { classifySmtpError, errorCode, errorFor, type SmtpPhase } from './classify';
import { startDeadline, type Deadline } from './deadline';
import {
  type CallContext,
  type Provider,
  type ProviderDeps,
  type ProviderLogger,
  type SendRequest,
  type SendResult,
  type SmtpProviderConfig,
  type SmtpProviderOptions,
} from './provider';
import { InFlight } from './in-flight';
import { listUnsubscribeRecord } from './list-unsubscribe';
import { resolveOptions } from './provider-options';

/** Header that carries the operation key next to the Message-ID (survives gateways that rewrite ids). */
export const OPERATION_HEADER = 'X-Singleshot-Operation';

const MAX_REPLY_CHARS = 200;

type SmtpError = Error & { code?: string; originalCode?: string; responseCode?: number; response?: string };

function invalid(message: string): ValidationError {
  return new ValidationError(message, undefined, 'INVALID_PROVIDER_CONFIG');
}

/** The `Message-ID` every copy of an operation carries: `<operation key@domain>`. */
export function smtpMessageId(operationKey: string, domain: string): string {
  return `<${operationKey}@${domain}>`;
}

/**
 * `type: smtp`, over nodemailer's SMTPConnection with one connection per send.
 *
 * Why not nodemailer's transport or pool: the classification needs to know how
 * far the dialogue got. A reply code is the server's word, but a lost
 * connection or timeout means "in doubt" only once message content started to
 * flow (before that the server has nothing it could deliver). With our own
 * connection we see each step: `connect` until the greeting/EHLO/AUTH are done,
 * `envelope` for MAIL/RCPT/DATA, `data` from the moment the content stream is
 * first read (the connection reads it only after the 354 reply). A pool would
 * also reuse sockets the relay may have dropped while idle, turning a harmless
 * reconnect into an in-doubt send, and would keep a failed session's state
 * between operations. The price is one TCP (+TLS) handshake per notification,
 * small next to the relay's own per-message work.
 *
 * Every copy carries `Message-ID: <operationKey@messageIdDomain>` and
 * `X-Singleshot-Operation: <operationKey>`, so a copy resent after an in-doubt
 * outcome is recognizably the same message. Plain SMTP cannot be asked whether
 * it has a message: there is no `lookup`.
 */
export class SmtpProvider implements Provider {
  readonly type = 'smtp' as const;
  readonly name: string;
  readonly messageIdDomain: string;
  private readonly options: SmtpProviderConfig;
  private readonly envelopeFrom: string;
  private readonly timeoutMs: number;
  private readonly logger: ProviderLogger | undefined;
  private readonly inFlight: InFlight;

  constructor(input: SmtpProviderOptions, deps: ProviderDeps = {}) {
    const options = resolveOptions(input);
    this.name = options.name;
    this.inFlight = new InFlight(options.name);
    this.options = options;
    this.logger = deps.logger;
    this.timeoutMs = options.timeoutMs;
    const [sender] = addressparser(options.from, { flatten: true });
    if (!sender?.address || !sender.address.includes('@')) {
      throw invalid(`provider ${options.name}: from has no address: ${options.from}`);
    }
    this.envelopeFrom = sender.address;
    const domain = (options.messageIdDomain ?? sender.address.slice(sender.address.lastIndexOf('@') + 1)).trim();
    if (!domain || /[\s<>@()[\]\\,;:"]/.test(domain)) {
      throw invalid(`provider ${options.name}: no usable Message-ID domain (${domain || 'empty'})`);
    }
    this.messageIdDomain = domain.toLowerCase();
  }

  async send(req: SendRequest, ctx: CallContext): Promise<SendResult> {
    return this.inFlight.run(() => {
      const deadline = startDeadline(ctx, this.timeoutMs);
      return this.deliver(req, deadline).finally(() => deadline.dispose());
    });
  }

  /** Stops new sends and waits for the ones in flight (each bounded by its deadline). */
  async close(): Promise<void> {
    await this.inFlight.close();
  }

  private async compose(req: SendRequest, messageId: string): Promise<Buffer> {
    try {
      return await new MailComposer({
        from: this.options.from,
        to: req.recipient,
        subject: req.subject,
        text: withDocumentLinks(req),
        ...(req.html !== undefined ? { html: req.html } : {}),
        ...(req.attachments?.length
          ? { attachments: req.attachments.map((a) => ({ filename: a.fileName, contentType: a.contentType, content: a.content })) }
          : {}),
        messageId,
        // The same key where Postmark (metadata) and Mailgun (user variables) hand it back in
        // their delivery feedback; both relays take these headers off before delivery.
        headers: {
          [OPERATION_HEADER]: req.operationKey,
          [`X-PM-Metadata-${POSTMARK_OPERATION_METADATA}`]: req.operationKey,
          'X-Mailgun-Variables': JSON.stringify({ [MAILGUN_OPERATION_VARIABLE]: req.operationKey }),
          ...listUnsubscribeRecord(req.listUnsubscribe),
        },
        // The content is ours, never a path or URL to fetch.
        disableFileAccess: true,
        disableUrlAccess: true,
      })
        .compile()
        .build();
    } catch (err) {
      throw new PermanentError(`${this.name}: message cannot be built: ${String(err)}`, 'INVALID_PAYLOAD', { cause: err });
    }
  }

  private async deliver(req: SendRequest, deadline: Deadline): Promise<SendResult> {
    const messageId = smtpMessageId(req.operationKey, this.messageIdDomain);
    const raw = await this.compose(req, messageId);
    return new Promise<SendResult>((resolve, reject) => {
      let phase: SmtpPhase = 'connect';
      let settled = false;
      const ms = Math.max(1, deadline.ms);
      const conn = new SMTPConnection({
        host: this.options.host,
        port: this.options.port,
        secure: this.options.secure,
        requireTLS: this.options.requireTls,
        connectionTimeout: ms,
        greetingTimeout: ms,
        socketTimeout: ms,
        dnsTimeout: ms,
        // Tear down at once: nothing may trickle out after we reported the outcome.
        socketCloseTimeout: 0,
        logger: false,
      });

      const fail = (err: unknown) => {
        if (settled) return;
        settled = true;
        deadline.signal.removeEventListener('abort', onAbort);
        conn.close();
        reject(this.toError(err, phase));
      };
      const onAbort = () => fail(deadline.reason() ?? new Error('aborted'));
      // Also keeps late 'error' events (after we settled) from crashing the process.
      conn.on('error', fail);
      if (deadline.signal.aborted) {
        onAbort();
        return;
      }
      deadline.signal.addEventListener('abort', onAbort, { once: true });

      const transmit = () => {
        if (settled) return;
        phase = 'envelope';
        const content = new Readable({
          read() {
            // A call we already reported (say, as safe to fall back) must not start its content now.
            if (settled) {
              this.destroy(new Error('call already ended'));
              return;
            }
            phase = 'data';
            this.push(raw);
            this.push(null);
          },
        });
        conn.send({ from: this.envelopeFrom, to: [req.recipient] }, content, (err, info) => {
          if (err) return fail(err);
          if (settled) return;
          settled = true;
          deadline.signal.removeEventListener('abort', onAbort);
          conn.quit();
          const response = String(info.response ?? '').trim().slice(0, MAX_REPLY_CHARS);
          if (info.serverMessageId && info.serverMessageId !== messageId) {
            // Some relays (Microsoft 365, SES) replace Message-ID; a resend will not share an id.
            this.logger?.warn(
              { event: 'smtp_message_id_replaced', provider: this.name, operationKey: req.operationKey, messageId, serverMessageId: info.serverMessageId },
              'SMTP relay replaced the Message-ID',
            );
          }
          resolve({ externalId: response ? `${messageId} ${response}` : messageId, detail: response || undefined });
        });
      };

      conn.connect((err) => {
        if (err) return fail(err);
        if (settled) return;
        const { user, password } = this.options;
        if (user && conn.allowsAuth) {
          conn.login({ user, pass: password ?? '' }, (loginErr) => (loginErr ? fail(loginErr) : transmit()));
        } else {
          transmit();
        }
      });
    });
  }

  private toError(err: unknown, phase: SmtpPhase) {
    const e = (err ?? {}) as SmtpError;
    const verdict = classifySmtpError(e, phase);
    const code = typeof e.responseCode === 'number' ? (`SMTP_${e.responseCode}` as const) : (errorCode(err) ?? 'UNKNOWN');
    const message = err instanceof Error ? err.message : String(err);
    return errorFor(verdict, `${this.name}: SMTP failed during ${phase} (${code}: ${message})`, code, { cause: err });
  }
}

/** The text body, with a link line for each document too large to attach. */
function withDocumentLinks(req: SendRequest): string {
  const links = (req.documents ?? []).filter((d) => !d.attached);
  if (links.length === 0) return req.text;
  const lines = links.map((d) => `${d.fileName}: ${d.url} (link valid until ${d.expiresAt})`);
  return `${req.text}\n\n${lines.join('\n')}`;
}
