import { RetryableError, SingleshotError } from '@singleshot/core';
import { ApiTransport } from './api-transport';
import { WHATSAPP_OUTSIDE_SESSION } from './classify-native';
import { TWILIO_OPERATION_PARAM } from './feedback/twilio-feedback';
import { resolveOptions } from './provider-options';
import { TwilioMessagesApi } from './twilio-messages-api';
import { contentFields, expectedTemplateBody, freeform, templated, templateFor, whatsappAddress, type WhatsappContent, type WhatsappSource } from './whatsapp-content';
import { findCopy, insideSession } from './whatsapp-history';
import type {
  CallContext,
  LookupResult,
  LookupTarget,
  Provider,
  ProviderDeps,
  SendRequest,
  SendResult,
  TwilioWhatsappProviderConfig,
  TwilioWhatsappProviderOptions,
} from './provider';

/** Least time worth starting the create with after the session check; less is handed back unsent. */
const MIN_CREATE_MS = 100;

/** What is left of a call's deadline after `usedMs`, with the caller's cancellation unchanged. */
function remainder(ctx: CallContext, usedMs: number): CallContext {
  return {
    timeoutMs: ctx.timeoutMs - usedMs,
    ...(ctx.endsAt !== undefined ? { endsAt: ctx.endsAt } : {}),
    get signal() {
      return ctx.signal;
    },
    get cancel() {
      return ctx.cancel;
    },
  };
}

/**
 * `type: twilio-whatsapp`: WhatsApp through Twilio's Messages API, spoken
 * directly (form-encoded create and list over our undici exchange, which
 * knows whether a request was written). `To`/`From` carry the `whatsapp:`
 * prefix; the message `sid` is the external id.
 *
 * The 24-hour rule: outside the customer service window WhatsApp takes only
 * an approved template (`ContentSid` + `ContentVariables`). With
 * `sessionWindow: check` the recipient's last inbound message is read before
 * the send; inside the window the text goes free-form, outside it the route's
 * template. No template where one is needed is WHATSAPP_OUTSIDE_SESSION, as is
 * Twilio's 63016 answer: a RetryableError safe to fall back from (nothing was
 * created), so the chain's next provider (SMS) sends it at once.
 *
 * In doubt: Twilio's create takes no idempotency key and keeps nothing of ours
 * on the message, so `lookup` lists the recipient's messages from our sender
 * since the first arrival and recognizes a copy by its body (whatsapp-history.ts).
 */
export class TwilioWhatsappProvider implements Provider {
  readonly type = 'twilio-whatsapp' as const;
  readonly name: string;
  private readonly options: TwilioWhatsappProviderConfig;
  private readonly transport: ApiTransport;
  private readonly api: TwilioMessagesApi;
  private readonly from: string;

  constructor(input: TwilioWhatsappProviderOptions, _deps: ProviderDeps = {}) {
    this.options = resolveOptions(input);
    this.name = this.options.name;
    this.from = whatsappAddress(this.options.from);
    this.transport = new ApiTransport(this.name, this.options.timeoutMs);
    this.api = new TwilioMessagesApi(this.transport, this.options.endpoint, this.options.accountSid, this.options.authToken as string, this.name);
  }

  async send(req: SendRequest, ctx: CallContext): Promise<SendResult> {
    const startedAt = Date.now();
    const to = whatsappAddress(req.recipient);
    const content = await this.contentFor(req, to, ctx);
    const left = remainder(ctx, Date.now() - startedAt);
    if (left.timeoutMs < MIN_CREATE_MS) throw new RetryableError(`${this.name}: no time left for the send after the session check`, 'DEADLINE', { safeToFallback: true });
    const fields: Record<string, string> = { To: to, From: this.from, ...contentFields(content) };
    if (this.options.statusCallbackUrl) {
      const url = new URL(this.options.statusCallbackUrl);
      url.searchParams.set(TWILIO_OPERATION_PARAM, req.operationKey);
      fields.StatusCallback = url.toString();
    }
    const created = await this.api.create(fields, left);
    return { externalId: created.sid, detail: `${content.kind} status ${created.status}` };
  }

  /**
   * Reconciles an in-doubt send: a message from our sender to the recipient,
   * created since the first arrival, whose body is what this operation sends
   * (its free-form text, or its template's text filled in when `text` is
   * configured). Needs `target.content`; without it, no verdict.
   */
  async lookup(_operationKey: string, ctx: CallContext, target?: LookupTarget): Promise<LookupResult> {
    if (!target?.content) throw new RetryableError(`${this.name}: lookup needs the recipient and the content`, 'LOOKUP_NO_TARGET');
    const src: WhatsappSource = { ...target.content, recipient: target.recipient };
    const bodies: string[] = [];
    const template = templateFor(this.options.templates, src.route);
    // With `check` either form may have gone out (the window can change between attempts).
    if (this.options.sessionWindow === 'check') bodies.push(freeform(src).body);
    let unpredictable = false;
    if (template) {
      const body = expectedTemplateBody(templated(template, src));
      if (body !== undefined) bodies.push(body);
      else unpredictable = true;
    }
    return findCopy(this.api, { to: whatsappAddress(target.recipient), from: this.from, since: target.since, bodies, unpredictable }, this.name, ctx);
  }

  close(): Promise<void> {
    return this.transport.close();
  }

  /** Free-form inside a checked window, else the route's template, else a refusal the chain falls back from. */
  private async contentFor(req: SendRequest, to: string, ctx: CallContext): Promise<WhatsappContent> {
    if (this.options.sessionWindow === 'check') {
      let inside: boolean;
      try {
        inside = await insideSession(this.api, to, this.from, Date.now(), ctx);
      } catch (err) {
        const code = err instanceof SingleshotError ? err.code.replace(/^LOOKUP_/, '') : 'UNKNOWN';
        const safe = err instanceof RetryableError && err.safeToFallback;
        throw new RetryableError(`${this.name}: session window check failed (${code})`, `WHATSAPP_SESSION_CHECK_${code}`, { cause: err, safeToFallback: safe });
      }
      if (inside) return freeform(req);
    }
    const template = templateFor(this.options.templates, req.route);
    if (template) return templated(template, req);
    const why = this.options.sessionWindow === 'check' ? 'no message from the recipient in the last 24 hours' : 'sessionWindow is template-only';
    throw new RetryableError(`${this.name}: ${why} and no template for route "${req.route ?? ''}" (or default)`, WHATSAPP_OUTSIDE_SESSION, { safeToFallback: true });
  }
}
