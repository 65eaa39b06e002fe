import type { Response } from 'express';
import type { IngestInput } from '@singleshot/core';
import { sendError } from '@singleshot/http';
import { acceptMessage, type AcceptResult } from '../accept';
import type { IngestContext } from '../context';
import { StoreUnavailableError } from '../errors';

/** Accepts one API event, counted by its source (bounded label). Throws StoreUnavailableError when Redis did not confirm. */
export async function acceptEvent(
  ctx: IngestContext,
  source: string,
  message: { messageKey: string; via: string; input: IngestInput },
): Promise<AcceptResult> {
  const result = await acceptMessage(ctx.accept, message);
  ctx.metrics.eventsReceived.inc({ source: ctx.sourceLabel(source), result: result.status });
  if (result.status === 'duplicate') ctx.metrics.duplicatesSuppressed.inc({ stage: 'ingest', reason: 'seen_before' });
  return result;
}

/** Answers 202 with the acceptance, or 503 with `Retry-After` when Redis did not confirm it. */
export async function answerAccepted(ctx: IngestContext, res: Response, messageKey: string, accept: () => Promise<AcceptResult>): Promise<void> {
  try {
    res.status(202).json(await accept());
  } catch (err) {
    if (err instanceof StoreUnavailableError) {
      ctx.logger.warn({ messageKey, err: { code: err.code, message: err.message } }, 'not accepted: Redis unavailable');
      res.set('Retry-After', '1');
      return sendError(res, 503, err.code, 'the event could not be stored; retry later');
    }
    throw err;
  }
}
