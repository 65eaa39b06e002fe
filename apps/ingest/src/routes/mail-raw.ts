import { Router, type Request, type Response } from 'express';
import { parseRawMail } from '@singleshot/mail';
import type { IngestContext } from '../context';
import { sendError } from '../errors';
import { answerAccepted } from './answer';

/** `POST /v1/mail/inbound?mailbox=ID` with one raw MIME mail (`message/rfc822`). */
export function rawMailRouter(ctx: IngestContext): Router {
  const router = Router();
  router.post('/', async (req: Request, res: Response) => {
    const mailboxId = typeof req.query.mailbox === 'string' ? req.query.mailbox : '';
    if (!mailboxId) return sendError(res, 400, 'MISSING_MAILBOX', 'the mailbox query parameter is required (?mailbox=ID)');
    if (!ctx.mailboxIds.has(mailboxId)) {
      ctx.metrics.eventsReceived.inc({ source: 'mail', result: 'invalid' });
      return sendError(res, 404, 'UNKNOWN_MAILBOX', `mailbox "${mailboxId}" is not configured`);
    }
    const raw = req.body as Buffer;
    if (!Buffer.isBuffer(raw) || raw.length === 0) {
      ctx.metrics.eventsReceived.inc({ source: 'mail', result: 'invalid' });
      return sendError(res, 400, 'EMPTY_MAIL', 'the body must be one raw MIME message');
    }
    const parsed = await parseRawMail(raw, { mailboxId, maxBytes: ctx.maxMailBytes });
    if (parsed.identityFallbackReason) ctx.metrics.fingerprintFallbacks.inc({ source: 'mail-raw' });
    await answerAccepted(ctx, res, 'mail', { messageKey: parsed.messageKey, via: 'mail-raw', input: parsed.input });
  });
  return router;
}
