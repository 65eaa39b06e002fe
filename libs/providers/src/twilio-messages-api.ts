import { RetryableError, SingleshotError, parseRetryAfter } from '@singleshot/core';
import type { IncomingHttpHeaders } from 'node:http';
import { excerpt, header, jsonObject, type ApiTransport } from './api-transport';
import { classifyHttpStatus, errorFor } from './classify';
import { classifyTwilioError, TWILIO_OUTSIDE_WINDOW, WHATSAPP_OUTSIDE_SESSION } from './classify-native';
import type { CallContext } from './provider';

/** One Message resource as the list and create answers carry it (the fields we read). */
export interface TwilioMessage {
  sid: string;
  body: string;
  from: string;
  to: string;
  direction: string;
  status: string;
  /** ms since the epoch (`date_created`, RFC 2822, whole seconds). */
  createdAt: number;
}

/** One page of `GET …/Messages.json`, newest first. */
export interface TwilioMessagePage {
  messages: TwilioMessage[];
  /** Path and query of the next page, when there is one. */
  nextPageUri: string | undefined;
}

function messageOf(raw: unknown): TwilioMessage | undefined {
  const m = raw as Record<string, unknown> | null;
  if (typeof m?.sid !== 'string' || !m.sid) return undefined;
  const createdAt = typeof m.date_created === 'string' ? Date.parse(m.date_created) : NaN;
  if (!Number.isFinite(createdAt)) return undefined;
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  return { sid: m.sid, body: text(m.body), from: text(m.from), to: text(m.to), direction: text(m.direction), status: text(m.status), createdAt };
}

/**
 * Twilio's Messages API (`/2010-04-01/Accounts/{AccountSid}/Messages.json`)
 * spoken directly over the provider's ApiTransport: form-encoded create,
 * list with filters. Error answers (`{ code, message, status }`) are
 * classified by Twilio's numeric code (TWILIO_ERROR_TABLE); 63016, a
 * free-form WhatsApp message outside the session window, is a definite
 * refusal the chain may fall back from.
 */
export class TwilioMessagesApi {
  private readonly path: string;
  private readonly auth: string;

  constructor(
    private readonly transport: ApiTransport,
    private readonly endpoint: string,
    accountSid: string,
    authToken: string,
    private readonly name: string,
  ) {
    this.path = `/2010-04-01/Accounts/${accountSid}/Messages.json`;
    this.auth = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;
  }

  /**
   * Creates a message. Returns its sid; throws classified errors. A 2xx
   * without a readable sid is in doubt (Twilio may have created it).
   */
  async create(fields: Record<string, string>, ctx: CallContext): Promise<{ sid: string; status: string }> {
    const res = await this.transport.request(
      { url: new URL(this.path, this.endpoint), method: 'POST', headers: this.headers({ 'content-type': 'application/x-www-form-urlencoded' }), body: new URLSearchParams(fields).toString() },
      ctx,
      (status, headers) => this.answerError(status, headers, undefined),
    );
    if (res.status < 200 || res.status > 299) throw this.answerError(res.status, res.headers, res.body);
    const created = res.truncated ? undefined : jsonObject(res.body);
    const sid = typeof created?.sid === 'string' && created.sid ? created.sid : undefined;
    if (sid) return { sid, status: String(created?.status ?? 'unknown') };
    throw errorFor({ outcome: 'in_doubt', safeToFallback: false }, `${this.name}: created without a sid`, 'NO_PROVIDER_ID');
  }

  /**
   * One page of the message list: `query` as filters (To, From, PageSize), or
   * a `next_page_uri` Twilio gave. Any failure, or an answer we cannot read,
   * throws RetryableError with a `LOOKUP_` code: a list read never guesses.
   */
  async list(query: Record<string, string> | string, ctx: CallContext): Promise<TwilioMessagePage> {
    const url = typeof query === 'string' ? new URL(query, this.endpoint) : new URL(`${this.path}?${new URLSearchParams(query).toString()}`, this.endpoint);
    let res;
    try {
      res = await this.transport.request({ url, method: 'GET', headers: this.headers({ accept: 'application/json' }) }, ctx, (status) => new RetryableError(`${this.name}: message list answered HTTP ${status}`, `LOOKUP_HTTP_${status}`));
    } catch (err) {
      const code = err instanceof SingleshotError ? err.code : 'UNKNOWN';
      throw new RetryableError(`${this.name}: message list failed (${code})`, code.startsWith('LOOKUP_') ? code : `LOOKUP_${code}`, { cause: err, safeToFallback: err instanceof RetryableError && err.safeToFallback });
    }
    const answer = res.status === 200 && !res.truncated ? jsonObject(res.body) : undefined;
    if (!answer || !Array.isArray(answer.messages)) {
      const twilio = jsonObject(res.body);
      const code = typeof twilio?.code === 'number' ? `TWILIO_${twilio.code}` : `HTTP_${res.status}`;
      throw new RetryableError(`${this.name}: message list answered HTTP ${res.status}`, `LOOKUP_${code}`);
    }
    const messages: TwilioMessage[] = [];
    for (const raw of answer.messages) {
      const m = messageOf(raw);
      // A listed message we cannot read could be the copy: no verdict rather than a wrong one.
      if (!m) throw new RetryableError(`${this.name}: unreadable message in the list`, 'LOOKUP_UNREADABLE');
      messages.push(m);
    }
    const next = typeof answer.next_page_uri === 'string' && answer.next_page_uri ? answer.next_page_uri : undefined;
    return { messages, nextPageUri: next };
  }

  private headers(extra: Record<string, string>): Record<string, string> {
    return { authorization: this.auth, ...extra };
  }

  /** Error answer of a create, classified by Twilio's error code, else the status. */
  private answerError(status: number, headers: IncomingHttpHeaders, body: Buffer | undefined): Error {
    const twilio = body ? jsonObject(body) : undefined;
    const code = typeof twilio?.code === 'number' ? twilio.code : undefined;
    if (code === TWILIO_OUTSIDE_WINDOW) {
      // Twilio refused it (nothing was created): the next provider of the chain may send it at once.
      return new RetryableError(`${this.name}: Twilio error 63016: free-form message outside the 24-hour session window`, WHATSAPP_OUTSIDE_SESSION, { safeToFallback: true });
    }
    const outcome = code !== undefined ? classifyTwilioError(code, status) : classifyHttpStatus(status);
    const text = body && body.length ? `: ${excerpt(body)}` : '';
    return errorFor({ outcome, safeToFallback: false }, `${this.name}: HTTP ${status} Twilio error ${code ?? 'none'}${text}`, code !== undefined ? `TWILIO_${code}` : `HTTP_${status}`, {
      retryAfterMs: outcome === 'retry' ? parseRetryAfter(header(headers, 'retry-after')) : undefined,
    });
  }
}
