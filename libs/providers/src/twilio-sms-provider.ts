import type twilioType from 'twilio';
import type RequestClient from 'twilio/lib/base/RequestClient';
import { PermanentError, SingleshotError, parseRetryAfter } from '@singleshot/core';
import type { IncomingHttpHeaders } from 'node:http';
import { ApiTransport, excerpt, header } from './api-transport';
import { classifyHttpStatus, errorFor } from './classify';
import { classifyTwilioError } from './classify-native';
import { resolveOptions } from './provider-options';
import { TWILIO_OPERATION_PARAM } from './feedback/twilio-feedback';
import type { CallContext, Provider, ProviderDeps, SendRequest, SendResult, TwilioSmsProviderConfig, TwilioSmsProviderOptions } from './provider';

type TwilioRequest = Parameters<RequestClient['request']>[0];

/** What the HTTP leg saw of the answer, for errors the SDK raises after it. */
interface Answered {
  status?: number;
  headers?: IncomingHttpHeaders;
}

/** Form body the way Twilio's own client encodes it: repeated keys for lists. */
function formBody(data: unknown): string {
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries((data ?? {}) as Record<string, unknown>)) {
    if (value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) form.append(key, String(item));
  }
  return form.toString();
}

// The twilio SDK (megabytes of heap) loads on the first SMS, not in every process.
let twilioSdk: Promise<typeof twilioType> | undefined;
const loadTwilio = () => (twilioSdk ??= import('twilio').then((m) => m.default));

/**
 * `type: twilio-sms`: the official `twilio` SDK's Messages API, with its HTTP
 * leg replaced (the SDK's documented `httpClient` option) by our undici
 * exchange, for two reasons: a transport failure must say whether the request
 * was written (retry or in doubt), and `endpoint` must be able to point the
 * SDK at another origin (a test server) — the SDK only knows twilio.com hosts.
 * The SDK still builds the request, authenticates and turns error answers
 * into `RestException` (status and Twilio error `code`), classified by
 * TWILIO_ERROR_TABLE. The message `sid` is the external id.
 *
 * Recipients are E.164 numbers, checked at fan-out. Twilio's Messages API has
 * no idempotency key and no lookup by a key of ours (a message can only be
 * found by sid, or listed by To/From/date), so there is no `lookup`: an
 * in-doubt send stays pinned here and `inDoubtPolicy` decides.
 */
export class TwilioSmsProvider implements Provider {
  readonly type = 'twilio-sms' as const;
  readonly name: string;
  private readonly options: TwilioSmsProviderConfig;
  private readonly transport: ApiTransport;
  private readonly endpoint: URL | undefined;
  /** The status callback URL of one operation: the key rides in `?op=`, covered by Twilio's signature of the callback. */
  private readonly statusCallback: ((operationKey: string) => string) | undefined;

  constructor(input: TwilioSmsProviderOptions, _deps: ProviderDeps = {}) {
    this.options = resolveOptions(input);
    this.name = this.options.name;
    this.endpoint = this.options.endpoint ? new URL(this.options.endpoint) : undefined;
    this.transport = new ApiTransport(this.name, this.options.timeoutMs);
    const callback = this.options.statusCallbackUrl;
    this.statusCallback = callback
      ? (operationKey) => {
          const url = new URL(callback);
          url.searchParams.set(TWILIO_OPERATION_PARAM, operationKey);
          return url.toString();
        }
      : undefined;
  }

  async send(req: SendRequest, ctx: CallContext): Promise<SendResult> {
    // The SDK calls the client once per create; a client per send binds this call's deadline to it.
    const answered: Answered = {};
    const httpClient = { request: (opts: TwilioRequest) => this.request(opts, ctx, answered) } as unknown as RequestClient;
    const twilio = await loadTwilio();
    const client = twilio(this.options.accountSid, this.options.authToken, { httpClient, autoRetry: false, lazyLoading: true });
    const { from, messagingServiceSid } = this.options;
    let message: { sid?: unknown; status?: unknown };
    try {
      message = await client.messages.create({
        to: req.recipient,
        body: req.text || req.subject,
        ...(messagingServiceSid ? { messagingServiceSid } : { from: from as string }),
        ...(this.statusCallback ? { statusCallback: this.statusCallback(req.operationKey) } : {}),
      });
    } catch (err) {
      throw this.failure(err, answered);
    }
    const sid = typeof message?.sid === 'string' && message.sid ? message.sid : undefined;
    if (sid) return { externalId: sid, detail: `status ${String(message.status ?? 'unknown')}` };
    throw errorFor({ outcome: 'in_doubt', safeToFallback: false }, `${this.name}: created without a sid`, 'NO_PROVIDER_ID');
  }

  close(): Promise<void> {
    return this.transport.close();
  }

  private async request(opts: TwilioRequest, ctx: CallContext, answered: Answered) {
    const url = new URL(opts.uri);
    const target = this.endpoint ? new URL(`${url.pathname}${url.search}`, this.endpoint) : url;
    for (const [k, v] of Object.entries((opts.params ?? {}) as Record<string, unknown>)) if (v !== undefined) target.searchParams.append(k, String(v));
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(opts.headers ?? {})) if (typeof v === 'string') headers[k.toLowerCase()] = v;
    headers.authorization = `Basic ${Buffer.from(`${opts.username ?? ''}:${opts.password ?? ''}`).toString('base64')}`;
    const method = opts.method.toUpperCase() === 'GET' ? 'GET' : 'POST';
    const res = await this.transport.request(
      { url: target, method, headers, ...(method === 'POST' ? { body: formBody(opts.data) } : {}) },
      ctx,
      (status, h) => this.statusError(status, h, undefined),
    );
    answered.status = res.status;
    answered.headers = res.headers;
    return { statusCode: res.status, body: res.body.toString('utf8'), headers: res.headers };
  }

  private failure(err: unknown, answered: Answered): Error {
    if (err instanceof SingleshotError) return err;
    const { status } = answered;
    const rest = err as { status?: unknown; code?: unknown; message?: unknown };
    if (typeof rest?.status === 'number' && rest.status >= 300) {
      const code = typeof rest.code === 'number' ? rest.code : undefined;
      const outcome = classifyTwilioError(code, rest.status);
      return errorFor({ outcome, safeToFallback: false }, `${this.name}: HTTP ${rest.status} Twilio error ${code ?? 'none'}: ${String(rest.message ?? '')}`, code ? `TWILIO_${code}` : `HTTP_${rest.status}`, {
        retryAfterMs: outcome === 'retry' ? parseRetryAfter(header(answered.headers, 'retry-after')) : undefined,
      });
    }
    // A 2xx the SDK could not read: Twilio may have created the message.
    if (status !== undefined && status >= 200 && status <= 299) {
      return errorFor({ outcome: 'in_doubt', safeToFallback: false }, `${this.name}: unreadable HTTP ${status} answer`, 'NO_PROVIDER_ID', { cause: err });
    }
    // The SDK refused to build the request (a missing parameter): nothing left, and never will.
    return new PermanentError(`${this.name}: request not built: ${err instanceof Error ? err.message : String(err)}`, 'INVALID_REQUEST', { cause: err });
  }

  private statusError(status: number, headers: IncomingHttpHeaders, body: Buffer | undefined): Error {
    const outcome = classifyHttpStatus(status);
    const text = body && body.length ? `: ${excerpt(body)}` : '';
    return errorFor({ outcome, safeToFallback: false }, `${this.name}: HTTP ${status}${text}`, `HTTP_${status}`, {
      retryAfterMs: outcome === 'retry' ? parseRetryAfter(header(headers, 'retry-after')) : undefined,
    });
  }
}
