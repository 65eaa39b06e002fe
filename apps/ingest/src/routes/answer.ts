import type { Response } from 'express';
import type { IngestInput } from '@singleshot/core';
import { acceptMessage } from '../accept';
import type { IngestContext } from '../context';
import { StoreUnavailableError, sendError } from '../errors';

/** Accepts a message and answers 202, or 503 when Redis did not confirm it. */
export async function answerAccepted(
  ctx: IngestContext,
  res: Response,
  source: string,
  message: { messageKey: string; via: string; input: IngestInput },
): Promise<void> {
  try {
    const result = await acceptMessage(ctx.accept, message);
    ctx.metrics.eventsReceived.inc({ source: ctx.sourceLabel(source), result: result.status });
    if (result.status === 'duplicate') ctx.metrics.duplicatesSuppressed.inc({ stage: 'ingest', reason: 'seen_before' });
    res.status(202).json(result);
  } catch (err) {
    if (err instanceof StoreUnavailableError) {
      ctx.logger.warn({ messageKey: message.messageKey, err: { code: err.code, message: err.message } }, 'not accepted: Redis unavailable');
      res.set('Retry-After', '1');
      return sendError(res, 503, err.code, 'the event could not be stored; retry later');
    }
    throw err;
  }
}
