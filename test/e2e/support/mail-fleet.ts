/**
 * A whole mail fleet for the `mail-*.test.ts` end-to-end suites: a real Redis,
 * a real Dovecot, an HTTP provider sink, a config with one mailbox per test
 * case (each polling its own IMAP folder of the one Dovecot user, so cases do
 * not share message keys or cursors), the inbound webhooks of the shared
 * provider fixtures, and `singleshot start` processes.
 *
 * Every mailbox routes to `notify_owner` on the `webhook` channel (an `http`
 * provider pointing at the sink, with `lookupUrl`), so "one notification" is
 * asserted where it happens: accepted effects per Idempotency-Key at the sink.
 */
import { operationKey, parseAction } from '@singleshot/core';
import type { Runtime } from '@singleshot/runtime';
import { ImapCursorStore, type MessageRecord } from '@singleshot/store';
import {
  spawnApps,
  startDovecot,
  startHttpSink,
  startTestRedis,
  testConfig,
  waitForQueuesIdle,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type HttpSink,
  type SinkAcceptance,
  type TestDovecot,
  type TestRedis,
} from '@singleshot/test-harness';
import { testRuntime } from '../../support/runtime';
// The provider fixtures are test data shared with the ingest app's own route
// test (one .eml in every shape the providers document), not the app's API.
import { POSTMARK, SENDGRID, SIGNING_KEY, MAIL, mailgunSignature, multipart, type Body } from '@singleshot/test-harness';
export { buildEml, mailgunParsed, mailgunRaw, mailgunSignature, postmarkJson, sendgridParsed, sendgridRaw } from '@singleshot/test-harness';


export const CHANNEL = 'webhook';
export const ACTION = 'notify_owner';

export interface MailboxSpec {
  id: string;
  /** IMAP folder the ingest app polls for this mailbox; omitted = webhook-only. */
  folder?: string;
  /** The IMAP size cap of this mailbox. */
  maxMessageBytes?: number;
}

export interface MailFleetOptions {
  mailboxes: MailboxSpec[];
  /** Apps of the main process; default every pipeline app. */
  apps?: string;
  /** Merged into the config's `ingest` section. */
  ingest?: Record<string, unknown>;
  /** Replaces testConfig's `delivery` section. */
  delivery?: Record<string, unknown>;
  pollIntervalMs?: number;
}

export interface HttpAnswer {
  status: number;
  json: { messageKey?: string; status?: string; error?: { code: string; message?: string } } | null;
}

export interface MailFleet {
  readonly redis: TestRedis;
  readonly dovecot: TestDovecot;
  readonly sink: HttpSink;
  /** In-process runtime on the fleet's Redis, for assertions on stores and queues. */
  readonly rt: Runtime;
  readonly cursors: ImapCursorStore;
  /** The `singleshot start --only <apps>` process. */
  readonly main: AppProcess;
  /** `http://127.0.0.1:<ingest port>` */
  readonly base: string;
  readonly configFile: string;
  /** Another app process on the same config (stopped by `stop()` at the latest). */
  spawn(apps: string): AppProcess;
  ownerOf(mailboxId: string): string;
  /** The operation key the decision makes for a mail of this mailbox. */
  opKeyOf(mailboxId: string, messageKey: string): string;
  post(path: string, body: Body, headers?: Record<string, string>): Promise<HttpAnswer>;
  raw(mailboxId: string, eml: Buffer): Promise<HttpAnswer>;
  mailgun(mailboxId: string, body: Body): Promise<HttpAnswer>;
  postmark(mailboxId: string, body: Body): Promise<HttpAnswer>;
  sendgrid(mailboxId: string, body: Body): Promise<HttpAnswer>;
  /** Accepted effects at the sink whose request body names this message key. */
  acceptedFor(messageKey: string): SinkAcceptance[];
  /** Waits until the message's operation is `sent` and the sink accepted it. */
  waitSent(mailboxId: string, messageKey: string, timeoutMs?: number): Promise<void>;
  /** Waits until the message record counts `count` arrivals through `via`. */
  waitArrivals(messageKey: string, via: string, count: number, timeoutMs?: number): Promise<MessageRecord>;
  /** Waits until no decide or deliver job is waiting, active or delayed. */
  waitQuiet(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

const FETCH_TIMEOUT_MS = 60_000;

/** Mailgun's raw-MIME route as multipart/form-data (what it posts when the mail is large). */
export function mailgunRawMultipart(eml: Buffer, sig = mailgunSignature()): Body {
  return multipart([
    ['recipient', MAIL.to],
    ['sender', MAIL.fromAddr],
    ['body-mime', eml, 'message/rfc822'],
    ['timestamp', sig.timestamp],
    ['token', sig.token],
    ['signature', sig.signature],
  ]);
}

export const basicAuth = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

export async function startMailFleet(options: MailFleetOptions): Promise<MailFleet> {
  const redis = await startTestRedis();
  const dovecot = await startDovecot();
  const sink = await startHttpSink();
  const extra: AppProcess[] = [];
  let rt: Runtime | undefined;
  let cleanup: () => void = () => undefined;
  try {
    // Polled folders exist before the pollers start, so they never spin on a missing folder.
    for (const m of options.mailboxes) if (m.folder && m.folder.toUpperCase() !== 'INBOX') await dovecot.createFolder(m.folder);
    const ownerOf = (id: string) => `owner-${id}@example.test`;
    const config = testConfig({
      redisUrl: redis.url,
      ingest: { port: 0, host: '127.0.0.1', ...options.ingest },
      ...(options.delivery ? { delivery: options.delivery } : {}),
      mailboxes: options.mailboxes.map((m) => ({
        id: m.id,
        owner: ownerOf(m.id),
        ...(m.folder
          ? {
              imap: {
                host: dovecot.host,
                port: dovecot.port,
                secure: false,
                user: dovecot.user,
                password: dovecot.password,
                folder: m.folder,
                pollIntervalMs: options.pollIntervalMs ?? 300,
                ...(m.maxMessageBytes ? { maxMessageBytes: m.maxMessageBytes } : {}),
              },
            }
          : {}),
      })),
      routes: [
        {
          name: 'mail-owner',
          match: { source: 'mail' },
          action: ACTION,
          channel: CHANNEL,
          template: { subject: 'New mail: {{mail.subject}}', text: 'identity={{mail.identity}} note={{mail.note}}' },
        },
      ],
      providers: { [CHANNEL]: [{ name: 'sink', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 10_000 }] },
      webhooks: { mailgun: { signingKey: SIGNING_KEY, toleranceSeconds: 300 }, postmark: POSTMARK, sendgrid: SENDGRID },
    });
    const written = writeConfigFile(config);
    cleanup = written.cleanup;
    rt = await testRuntime(config);
    const runtime = rt;
    const main = spawnApps(options.apps ?? 'ingest,decision,delivery', written.file);
    extra.push(main);
    const base = `http://127.0.0.1:${await main.metricsPort()}`;
    const action = parseAction(ACTION);

    const post = async (path: string, body: Body, headers: Record<string, string> = {}): Promise<HttpAnswer> => {
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        body: body.body,
        headers: { ...(body.contentType ? { 'content-type': body.contentType } : {}), ...headers },
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      });
      const json = (await res.json().catch(() => null)) as HttpAnswer['json'];
      return { status: res.status, json };
    };
    const opKeyOf = (mailboxId: string, messageKey: string) => operationKey({ messageKey, action, recipient: ownerOf(mailboxId), channel: CHANNEL });
    const acceptedFor = (messageKey: string) =>
      [...sink.accepted.values()].filter((a) => (a.body as { messageKey?: string } | undefined)?.messageKey === messageKey);

    return {
      redis,
      dovecot,
      sink,
      rt: runtime,
      cursors: new ImapCursorStore(runtime.redis, runtime.keys),
      main,
      base,
      configFile: written.file,
      spawn: (apps) => {
        const proc = spawnApps(apps, written.file);
        extra.push(proc);
        return proc;
      },
      ownerOf,
      opKeyOf,
      post,
      raw: (mailboxId, eml) => post(`/v1/mail/inbound?mailbox=${mailboxId}`, { body: eml, contentType: 'message/rfc822' }),
      mailgun: (mailboxId, body) => post(`/v1/mail/inbound/mailgun?mailbox=${mailboxId}`, body),
      postmark: (mailboxId, body) => post(`/v1/mail/inbound/postmark?mailbox=${mailboxId}`, body, { authorization: basicAuth(POSTMARK.username, POSTMARK.password) }),
      sendgrid: (mailboxId, body) => post(`/v1/mail/inbound/sendgrid?mailbox=${mailboxId}&token=${SENDGRID.token}`, body),
      acceptedFor,
      waitSent: async (mailboxId, messageKey, timeoutMs = 60_000) => {
        const key = opKeyOf(mailboxId, messageKey);
        await waitUntil(
          async () => sink.accepted.has(key) && (await runtime.operations.get(key))?.status === 'sent',
          `operation ${key.slice(0, 12)} of mailbox ${mailboxId} to be sent`,
          { timeoutMs, intervalMs: 50 },
        );
      },
      waitArrivals: (messageKey, via, count, timeoutMs = 60_000) =>
        waitUntil(
          async () => {
            const record = await runtime.messages.get(messageKey);
            return record && (record.via[via] ?? 0) >= count ? record : undefined;
          },
          `${count} arrival(s) of ${messageKey.slice(0, 12)} via ${via}`,
          { timeoutMs },
        ),
      waitQuiet: async (timeoutMs = 60_000) => {
        await waitForQueuesIdle(runtime.queues, { timeoutMs, what: 'the decide and deliver queues to drain' });
      },
      stop: async () => {
        await Promise.all(extra.map((p) => p.stop()));
        await runtime.close();
        await sink.close();
        await dovecot.stop();
        await redis.destroy();
        cleanup();
      },
    };
  } catch (err) {
    await Promise.all(extra.map((p) => p.stop()));
    await rt?.close();
    await sink.close();
    await dovecot.stop();
    await redis.destroy();
    cleanup();
    throw err;
  }
}

/** A small RFC 5322 mail; `messageId: null` leaves the header out. */
export function simpleEml(opts: { messageId: string | null; subject?: string; from?: string; body?: string; date?: string }): Buffer {
  return Buffer.from(
    [
      `From: ${opts.from ?? 'Alice <alice@example.com>'}`,
      'To: support@example.test',
      `Subject: ${opts.subject ?? 'Invoice 42'}`,
      `Date: ${opts.date ?? 'Mon, 30 Nov 2026 10:00:00 +0000'}`,
      ...(opts.messageId === null ? [] : [`Message-ID: ${opts.messageId}`]),
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      opts.body ?? 'Please find the invoice attached.',
      '',
    ].join('\r\n'),
  );
}
