import { Router, type Request, type Response } from 'express';
import { sendError } from '@singleshot/http';
import { parseRawMail } from '@singleshot/mail';
import type { IngestContext } from '../context';
import { acceptMail } from '../mail-intake';
import { mayPost, producerOf } from '../producer-auth';
import { answerAccepted } from './answer';

/** `POST /v1/mail/inbound?mailbox=ID` with one raw MIME mail (`message/rfc822`); the key must be allowed source `mail`. */
export function rawMailRouter(ctx: IngestContext): Router {
  const router = Router();
  router.post('/', async (req: Request, res: Response) => {
    const producer = producerOf(res);
    if (!mayPost(producer, 'mail')) {
      ctx.metrics.eventsReceived.inc({ source: 'mail', result: 'invalid' });
      return sendError(res, 403, 'SOURCE_NOT_ALLOWED', `key "${producer.name}" may not post source "mail"`, { key: producer.name, source: 'mail' });
    }
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
    // The one way in for every mail path: counted and keyed like webhook and IMAP mail.
    await answerAccepted(ctx, res, parsed.messageKey, acceptMail(ctx, parsed, 'mail-raw'));
  });
  return router;
}
