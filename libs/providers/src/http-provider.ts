import { Agent } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import { PermanentError, RetryableError, ValidationError, parseRetryAfter } from '@singleshot/core';
import { excerpt, header, jsonObject } from './api-transport';
import { classifyHttpError, classifyHttpStatus, errorCode, errorFor } from './classify';
import { startDeadline } from './deadline';
import { exchange, type HttpCall, type HttpExchange } from './http-exchange';
import { resolveOptions } from './provider-options';
import { currentTraceparent } from '@singleshot/tracing';
import {
  type CallContext,
  type HttpProviderOptions,
  type LookupResult,
  type Provider,
  type ProviderDeps,
  type SendRequest,
  type SendResult,
} from './provider';

function parseUrl(value: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch (err) {
    throw new ValidationError(`${what} is not a URL: ${value}`, { cause: String(err) }, 'INVALID_PROVIDER_CONFIG');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ValidationError(`${what} must be http(s): ${value}`, undefined, 'INVALID_PROVIDER_CONFIG');
  }
  return url;
}

/** The `id` of a JSON `{ "id": "…" }` body, or undefined for anything else. */
function providerId(body: Buffer): string | undefined {
  const id = jsonObject(body)?.id;
  return typeof id === 'string' && id.trim() !== '' ? id : undefined;
}

/**
 * `type: http`: POSTs the rendered message as JSON with `Idempotency-Key`
 * (docs/contract.md "Outbound HTTP provider"). One undici Agent per provider keeps
 * connections alive between sends; `close()` drains and closes it.
 *
 * Keep-alive has one cost worth knowing: when the server closes an idle
 * connection just as we write on it, the send is reported in doubt (the bytes
 * left). That is the safe side; reconciliation resolves it. undici's default
 * keep-alive timeout (4 s, or the server's `Keep-Alive` hint minus 1 s) keeps
 * that window small.
 */
export class HttpProvider implements Provider {
  readonly type = 'http' as const;
  readonly name: string;
  readonly lookup?: (operationKey: string, ctx: CallContext) => Promise<LookupResult>;
  private readonly url: URL;
  private readonly lookupBase: URL | undefined;
  private readonly timeoutMs: number;
  private readonly extraHeaders: Record<string, string>;
  /** A send's headers but the idempotency key, as undici's flat name/value list (built once). */
  private readonly sendHeaders: readonly string[];
  private readonly agent: Agent;
  private closed = false;

  constructor(input: HttpProviderOptions, _deps: ProviderDeps = {}) {
    const options = resolveOptions(input);
    this.name = options.name;
    this.url = parseUrl(options.url, `provider ${options.name}: url`);
    this.lookupBase = options.lookupUrl ? parseUrl(options.lookupUrl, `provider ${options.name}: lookupUrl`) : undefined;
    this.timeoutMs = options.timeoutMs;
    // Lower-cased so a configured "content-type" cannot sit next to ours as a second header.
    const reserved = new Set(['content-type', 'idempotency-key', 'content-length', 'host']);
    this.extraHeaders = Object.fromEntries(
      Object.entries(options.headers ?? {})
        .map(([k, v]) => [k.toLowerCase(), v] as const)
        .filter(([k]) => !reserved.has(k)),
    );
    this.sendHeaders = [...Object.entries(this.extraHeaders).flat(), 'content-type', 'application/json', 'accept', 'application/json'];
    this.agent = new Agent({ connect: { timeout: this.timeoutMs } });
    if (this.lookupBase) this.lookup = (key, ctx) => this.lookupKey(key, ctx);
  }

  async send(req: SendRequest, ctx: CallContext): Promise<SendResult> {
    this.assertOpen();
    let body: string;
    try {
      body = JSON.stringify({
        operationKey: req.operationKey,
        messageKey: req.messageKey,
        recipient: req.recipient,
        channel: req.channel,
        subject: req.subject,
        text: req.text,
        data: req.data,
        // Documents travel as time-limited links (never inline bytes in a webhook).
        ...(req.documents?.length
          ? { documents: req.documents.map(({ name, fileName, contentType, size, checksum, url, expiresAt }) => ({ name, fileName, contentType, size, checksum, url, expiresAt })) }
          : {}),
      });
    } catch (err) {
      throw new PermanentError(`payload cannot be serialized: ${String(err)}`, 'INVALID_PAYLOAD', { cause: err });
    }
    // The call's span (delivery's provider.send) goes on as W3C `traceparent`: a provider that traces joins the trace.
    const traceparent = currentTraceparent();
    const result = await this.call(
      {
        url: this.url,
        method: 'POST',
        headers: traceparent === undefined ? [...this.sendHeaders, 'idempotency-key', req.operationKey] : [...this.sendHeaders, 'idempotency-key', req.operationKey, 'traceparent', traceparent],
        body,
      },
      ctx,
    );

    if (result.kind === 'error') throw this.transportError(result, 'send');
    const { status } = result;
    if (status >= 200 && status <= 299) {
      const id = result.truncated ? undefined : providerId(result.body);
      if (id) return { externalId: id, detail: `HTTP ${status}` };
      // Accepted or not, we cannot tell: a 2xx without an id is never success (DESIGN seeds).
      throw errorFor(
        { outcome: 'in_doubt', safeToFallback: false },
        `${this.name}: HTTP ${status} without a provider id (${excerpt(result.body) || 'empty body'})`,
        'NO_PROVIDER_ID',
      );
    }
    throw this.statusError(status, result.headers, result.body);
  }

  /**
   * `GET <lookupUrl>/<key>`: 200 `{id}` → found, 404 → not found. Anything else,
   * including a transport failure or a 200 without an id, throws RetryableError:
   * reconciliation must not guess. (A 404 can only be trusted as far as lookupUrl
   * is right: a wrong path reads as "not found".)
   */
  private async lookupKey(operationKey: string, ctx: CallContext): Promise<LookupResult> {
    this.assertOpen();
    const base = this.lookupBase as URL;
    const url = new URL(base);
    url.pathname = `${base.pathname.replace(/\/+$/, '')}/${encodeURIComponent(operationKey)}`;
    const result = await this.call(
      { url, method: 'GET', headers: withTraceparent({ ...this.extraHeaders, accept: 'application/json' }) },
      ctx,
    );
    if (result.kind === 'error') {
      const code = errorCode(result.error) ?? 'UNKNOWN';
      throw new RetryableError(`${this.name}: lookup failed (${code})`, `LOOKUP_${code}`, { cause: result.error });
    }
    if (result.status === 404) return { found: false };
    if (result.status === 200) {
      const id = result.truncated ? undefined : providerId(result.body);
      if (id) return { found: true, externalId: id };
      throw new RetryableError(`${this.name}: lookup answered 200 without an id`, 'LOOKUP_NO_ID');
    }
    throw new RetryableError(`${this.name}: lookup answered HTTP ${result.status}`, `LOOKUP_HTTP_${result.status}`, {
      retryAfterMs: parseRetryAfter(header(result.headers, 'retry-after')),
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Graceful: requests in flight finish (each is bounded by its own deadline).
    await this.agent.close();
  }

  private assertOpen(): void {
    if (this.closed) {
      throw new RetryableError(`${this.name}: provider is closed`, 'PROVIDER_CLOSED', { safeToFallback: true });
    }
  }

  private call(call: HttpCall, ctx: CallContext): Promise<HttpExchange> {
    const deadline = startDeadline(ctx, this.timeoutMs);
    const done = exchange(this.agent, call, deadline, deadline.ms);
    // Disposed once the exchange settled, without an async frame of its own.
    const dispose = () => deadline.dispose();
    void done.then(dispose, dispose);
    return done;
  }

  private statusError(status: number, headers: IncomingHttpHeaders | undefined, body?: Buffer) {
    const outcome = classifyHttpStatus(status);
    const text = body && body.length ? `: ${excerpt(body)}` : '';
    return errorFor({ outcome, safeToFallback: false }, `${this.name}: HTTP ${status}${text}`, `HTTP_${status}`, {
      retryAfterMs: outcome === 'retry' ? parseRetryAfter(header(headers, 'retry-after')) : undefined,
    });
  }

  private transportError(result: Extract<HttpExchange, { kind: 'error' }>, what: string) {
    // Headers arrived and the status already decides (a 4xx/5xx whose body was cut off).
    if (result.status !== undefined && (result.status < 200 || result.status > 399)) {
      return this.statusError(result.status, result.headers);
    }
    const code = errorCode(result.error) ?? 'UNKNOWN';
    const verdict = classifyHttpError(code, result.requestStarted);
    const where = result.requestStarted ? 'after the request was written' : 'before the request was written';
    const message = result.error instanceof Error ? result.error.message : String(result.error);
    return errorFor(verdict, `${this.name}: ${what} failed ${where} (${code}: ${message})`, code, {
      cause: result.error,
    });
  }
}

/** Adds the active span's `traceparent` to a lookup's headers when tracing is on. */
function withTraceparent(headers: Record<string, string>): Record<string, string> {
  const traceparent = currentTraceparent();
  if (traceparent !== undefined) headers.traceparent = traceparent;
  return headers;
}
