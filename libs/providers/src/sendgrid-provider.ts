import { parseRetryAfter } from '@singleshot/core';
import type { IncomingHttpHeaders } from 'node:http';
import { ApiTransport, excerpt, header } from './api-transport';
import { errorFor } from './classify';
import { classifySendgridStatus } from './classify-native';
import { resolveOptions } from './provider-options';
import { listUnsubscribeRecord } from './list-unsubscribe';
import { OPERATION_HEADER } from './smtp-provider';
import type { CallContext, Provider, ProviderDeps, SendRequest, SendResult, SendgridProviderConfig, SendgridProviderOptions } from './provider';

/** The `custom_args` key that carries the operation key (and comes back in Event Webhook posts). */
export const SENDGRID_OPERATION_ARG = 'operation_key';

/** Seconds until `X-RateLimit-Reset` (epoch seconds), SendGrid's documented 429 hint. */
function rateLimitResetMs(headers: IncomingHttpHeaders, now = Date.now()): number | undefined {
  const reset = Number(header(headers, 'x-ratelimit-reset'));
  return Number.isFinite(reset) && reset > 0 ? Math.max(0, reset * 1000 - now) : undefined;
}

/**
 * `type: sendgrid`: SendGrid's v3 Mail Send API over undici (the documented
 * HTTP API rather than @sendgrid/mail, whose axios transport cannot say
 * whether a failed request was written, which decides "retry" versus "in
 * doubt"). The operation key travels in `custom_args` (so it shows in the
 * Event Webhook and Email Activity) and in the `X-Singleshot-Operation`
 * header; `X-Message-Id` of the 202 is the external id.
 *
 * Mail Send takes no idempotency key and SendGrid offers no synchronous
 * lookup by custom argument (Email Activity search is an add-on and lags
 * minutes behind), so there is no `lookup`: an in-doubt send stays pinned to
 * this provider and the channel's `inDoubtPolicy` decides (docs/providers.md).
 */
export class SendgridProvider implements Provider {
  readonly type = 'sendgrid' as const;
  readonly name: string;
  private readonly options: SendgridProviderConfig;
  private readonly url: URL;
  private readonly transport: ApiTransport;

  constructor(input: SendgridProviderOptions, _deps: ProviderDeps = {}) {
    this.options = resolveOptions(input);
    this.name = this.options.name;
    this.url = new URL(`${this.options.endpoint.replace(/\/+$/, '')}/v3/mail/send`);
    this.transport = new ApiTransport(this.name, this.options.timeoutMs);
  }

  async send(req: SendRequest, ctx: CallContext): Promise<SendResult> {
    const { from, fromName } = this.options;
    const body = JSON.stringify({
      personalizations: [{ to: [{ email: req.recipient }] }],
      from: fromName ? { email: from, name: fromName } : { email: from },
      // SendGrid rejects an empty subject; a notification without one still goes out.
      subject: req.subject || ' ',
      content: [{ type: 'text/plain', value: req.text || ' ' }],
      headers: { [OPERATION_HEADER]: req.operationKey, ...listUnsubscribeRecord(req.listUnsubscribe) },
      custom_args: { [SENDGRID_OPERATION_ARG]: req.operationKey, message_key: req.messageKey },
    });
    const res = await this.transport.request(
      {
        url: this.url,
        method: 'POST',
        headers: { authorization: `Bearer ${this.options.apiKey as string}`, 'content-type': 'application/json', accept: 'application/json' },
        body,
      },
      ctx,
      (status, headers) => this.statusError(status, headers),
    );
    if (res.status >= 200 && res.status <= 299) {
      const id = header(res.headers, 'x-message-id')?.trim();
      if (id) return { externalId: id, detail: `HTTP ${res.status}` };
      throw errorFor({ outcome: 'in_doubt', safeToFallback: false }, `${this.name}: HTTP ${res.status} without X-Message-Id`, 'NO_PROVIDER_ID');
    }
    throw this.statusError(res.status, res.headers, res.body);
  }

  close(): Promise<void> {
    return this.transport.close();
  }

  private statusError(status: number, headers: IncomingHttpHeaders, body?: Buffer): Error {
    const outcome = classifySendgridStatus(status);
    const text = body && body.length ? `: ${excerpt(body)}` : '';
    const retryAfterMs = outcome === 'retry' ? (parseRetryAfter(header(headers, 'retry-after')) ?? rateLimitResetMs(headers)) : undefined;
    return errorFor({ outcome, safeToFallback: false }, `${this.name}: HTTP ${status}${text}`, `HTTP_${status}`, { retryAfterMs });
  }
}
