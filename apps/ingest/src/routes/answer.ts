import type { ServerResponse } from 'node:http';
import type { IngestInput } from '@singleshot/core';
import { sendError, sendJson } from '@singleshot/http';
import type { IngestContext } from '../context';
import { StoreUnavailableError, type AcceptResult } from '@singleshot/intake';

/** Accepts one API event, counted by its source (bounded label). Throws StoreUnavailableError when Redis did not confirm. */
export async function acceptEvent(
  ctx: IngestContext,
  source: string,
  message: { messageKey: string; via: string; input: IngestInput; traceparent?: string | undefined },
): Promise<AcceptResult> {
  const result = await ctx.accept.accept(message);
  ctx.counters.received(ctx.sourceLabel(source), result.status);
  if (result.status === 'duplicate') ctx.counters.duplicateAtIngest();
  return result;
}

/**
 * Answers 202 with the acceptance (JSON, no ETag), or 503 with `Retry-After`
 * when Redis did not confirm it; any other error is rethrown (a 500 upstream).
 */
export async function answerAccepted(ctx: IngestContext, res: ServerResponse, messageKey: string, accepting: Promise<AcceptResult>): Promise<void> {
  try {
    sendJson(res, 202, await accepting);
  } catch (err) {
    if (err instanceof StoreUnavailableError) {
      ctx.logger.warn({ event: 'intake_store_unavailable', messageKey, err: { code: err.code, message: err.message } }, 'not accepted: Redis unavailable');
      res.setHeader('retry-after', '1');
      return sendError(res, 503, 'STORE_UNAVAILABLE', 'the event could not be stored; retry later');
    }
    throw err;
  }
}

/** 413 `BODY_TOO_LARGE`: the body exceeds `ingest.maxBodyBytes`. */
export function answerTooLarge(ctx: Pick<IngestContext, 'maxBodyBytes'>, res: ServerResponse): void {
  sendError(res, 413, 'BODY_TOO_LARGE', `the body exceeds ${ctx.maxBodyBytes} bytes`);
}

/** An unexpected error: logged, and 500 (never a 2xx for something not kept), or the socket closed if an answer began. */
export function answerInternal(ctx: Pick<IngestContext, 'logger'>, res: ServerResponse, err: unknown): void {
  ctx.logger.error({ event: 'request_failed', err }, 'ingest request failed');
  if (res.headersSent) return void res.destroy();
  // Never a 2xx for something not kept; 500 tells the producer to retry.
  sendError(res, 500, 'INTERNAL', 'internal error; the event was not confirmed, retry');
}
