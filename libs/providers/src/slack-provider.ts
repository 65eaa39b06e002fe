import { parseRetryAfter } from '@singleshot/core';
import type { IncomingHttpHeaders } from 'node:http';
import { ApiTransport, excerpt, header, jsonObject } from './api-transport';
import { classifyHttpStatus, errorFor } from './classify';
import { classifySlackError } from './classify-native';
import { resolveOptions } from './provider-options';
import { SLACK_EVENT_TYPE } from './slack-event';
import { slackLookup } from './slack-lookup';
import type { CallContext, LookupResult, LookupTarget, Provider, ProviderDeps, SendRequest, SendResult, SlackProviderConfig, SlackProviderOptions } from './provider';

export { SLACK_EVENT_TYPE } from './slack-event';

/**
 * `type: slack`: Web API `chat.postMessage` with a bot token, over undici
 * (the documented HTTP method rather than @slack/web-api, which retries on its
 * own and whose axios transport cannot say whether a failed request was
 * written). Recipients are conversation ids (`C…`, `G…`, `D…`) or user ids
 * (`U…`, `W…`, posted as a DM by the app), checked at fan-out. The answer's
 * `ts` is the external id.
 *
 * Every message carries `metadata: { event_type: "singleshot_notification",
 * event_payload: { operation_key } }`, so a copy can be recognized in
 * `conversations.history` (with `include_all_metadata`). Slack has no
 * idempotency key for `chat.postMessage`; with `lookup: true` the provider
 * reconciles an in-doubt post by searching the recipient's conversation for
 * that metadata (slack-lookup.ts). Without it, an in-doubt post stays pinned
 * here and `inDoubtPolicy` decides.
 */
export class SlackProvider implements Provider {
  readonly type = 'slack' as const;
  readonly name: string;
  private readonly options: SlackProviderConfig;
  private readonly url: URL;
  private readonly transport: ApiTransport;
  readonly lookup?: (operationKey: string, ctx: CallContext, target?: LookupTarget) => Promise<LookupResult>;

  constructor(input: SlackProviderOptions, _deps: ProviderDeps = {}) {
    this.options = resolveOptions(input);
    this.name = this.options.name;
    this.url = new URL(`${this.options.endpoint.replace(/\/+$/, '')}/chat.postMessage`);
    this.transport = new ApiTransport(this.name, this.options.timeoutMs);
    if (this.options.lookup) {
      const call = { transport: this.transport, endpoint: this.options.endpoint, token: this.options.token as string, name: this.name };
      this.lookup = (key, ctx, target) => slackLookup(call, key, ctx, target);
    }
  }

  async send(req: SendRequest, ctx: CallContext): Promise<SendResult> {
    const text = req.subject ? `*${req.subject}*\n${req.text}` : req.text;
    const body = JSON.stringify({
      channel: req.recipient,
      text,
      unfurl_links: false,
      metadata: { event_type: SLACK_EVENT_TYPE, event_payload: { operation_key: req.operationKey, message_key: req.messageKey } },
    });
    const res = await this.transport.request(
      {
        url: this.url,
        method: 'POST',
        headers: { authorization: `Bearer ${this.options.token as string}`, 'content-type': 'application/json; charset=utf-8', accept: 'application/json' },
        body,
      },
      ctx,
      (status, headers) => this.statusError(status, headers),
    );
    if (res.status !== 200) throw this.statusError(res.status, res.headers, res.body);
    const answer = res.truncated ? undefined : jsonObject(res.body);
    if (answer?.ok === true) {
      const ts = typeof answer.ts === 'string' && answer.ts ? answer.ts : undefined;
      if (ts) return { externalId: ts, detail: `channel ${String(answer.channel ?? req.recipient)}` };
      throw errorFor({ outcome: 'in_doubt', safeToFallback: false }, `${this.name}: ok without ts`, 'NO_PROVIDER_ID');
    }
    if (answer?.ok === false && typeof answer.error === 'string') {
      const outcome = classifySlackError(answer.error);
      const retryAfterMs = outcome === 'retry' ? parseRetryAfter(header(res.headers, 'retry-after')) : undefined;
      throw errorFor({ outcome, safeToFallback: false }, `${this.name}: chat.postMessage answered ${answer.error}`, `SLACK_${answer.error.toUpperCase()}`, { retryAfterMs });
    }
    // A 200 we cannot read: Slack may have posted it.
    throw errorFor({ outcome: 'in_doubt', safeToFallback: false }, `${this.name}: unreadable 200 (${excerpt(res.body) || 'empty body'})`, 'NO_PROVIDER_ID');
  }

  close(): Promise<void> {
    return this.transport.close();
  }

  private statusError(status: number, headers: IncomingHttpHeaders, body?: Buffer): Error {
    const outcome = classifyHttpStatus(status);
    const text = body && body.length ? `: ${excerpt(body)}` : '';
    const retryAfterMs = outcome === 'retry' ? parseRetryAfter(header(headers, 'retry-after')) : undefined;
    return errorFor({ outcome, safeToFallback: false }, `${this.name}: HTTP ${status}${text}`, `HTTP_${status}`, { retryAfterMs });
  }
}
