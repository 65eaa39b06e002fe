import { Agent } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import { RetryableError } from '@singleshot/core';
import { classifyHttpError, errorCode, errorFor } from './classify';
import { startDeadline } from './deadline';
import { exchange, type HttpCall, type HttpExchange } from './http-exchange';
import type { CallContext } from './provider';

export type ApiResponse = Extract<HttpExchange, { kind: 'response' }>;

/** Longest excerpt of a provider's answer we put into an error message. */
const EXCERPT_CHARS = 200;

export function excerpt(body: Buffer): string {
  const text = body.toString('utf8', 0, Math.min(body.length, EXCERPT_CHARS * 4)).replace(/\s+/g, ' ').trim();
  return text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}…` : text;
}

export function header(headers: IncomingHttpHeaders | undefined, name: string): string | undefined {
  const value = headers?.[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Parsed JSON object of a body, or undefined for anything else. */
export function jsonObject(body: Buffer): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The HTTP leg shared by the providers that speak a vendor's documented HTTP
 * API (SendGrid, Slack, Twilio's SDK through its pluggable client): one undici
 * Agent per provider, one deadline per call, and the exchange of
 * http-exchange.ts, which knows whether the request was written. A transport
 * failure is thrown already classified (`classifyHttpError`); a response,
 * whatever its status, is returned for the provider's own table.
 */
export class ApiTransport {
  private readonly agent: Agent;
  private closed = false;

  constructor(
    readonly name: string,
    private readonly timeoutMs: number,
  ) {
    this.agent = new Agent({ connect: { timeout: timeoutMs } });
  }

  /**
   * `onStatus` classifies a final status whose body was cut off (headers
   * arrived, then the connection failed): the status already decides.
   */
  async request(call: HttpCall, ctx: CallContext, onStatus: (status: number, headers: IncomingHttpHeaders) => Error): Promise<ApiResponse> {
    if (this.closed) throw new RetryableError(`${this.name}: provider is closed`, 'PROVIDER_CLOSED', { safeToFallback: true });
    const deadline = startDeadline(ctx, this.timeoutMs);
    let result: HttpExchange;
    try {
      result = await exchange(this.agent, call, deadline, deadline.ms);
    } finally {
      deadline.dispose();
    }
    if (result.kind === 'response') return result;
    if (result.status !== undefined && (result.status < 200 || result.status > 399)) throw onStatus(result.status, result.headers ?? {});
    const code = errorCode(result.error) ?? 'UNKNOWN';
    const verdict = classifyHttpError(code, result.requestStarted);
    const where = result.requestStarted ? 'after the request was written' : 'before the request was written';
    const message = result.error instanceof Error ? result.error.message : String(result.error);
    throw errorFor(verdict, `${this.name}: ${call.method} ${call.url.pathname} failed ${where} (${code}: ${message})`, code, { cause: result.error });
  }

  /** Graceful: requests in flight finish, each bounded by its own deadline. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.agent.close();
  }
}
