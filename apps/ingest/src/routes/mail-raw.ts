import { sendError } from '@singleshot/http';
import { parseRawMail } from '@singleshot/mail';
import { errorResponse } from '@singleshot/observability';
import type { IngestContext } from '../context';
import { rawRoute, type IngestRoute } from '../http/route';
import { acceptMail } from '../mail-intake';
import { accepted, intakeErrors, mailboxParameter } from '../openapi-parts';
import { mayPost } from '../producer-auth';
import { answerAccepted } from './answer';

/** `POST /v1/mail/inbound?mailbox=ID` with one raw MIME mail (`message/rfc822`); the key must be allowed source `mail`. */
export function rawMailRoute(ctx: IngestContext): IngestRoute {
  return rawRoute({
    method: 'POST',
    path: '/v1/mail/inbound',
    gate: 'producer',
    bodyLimit: ctx.maxBodyBytes,
    handle: async ({ producer: admitted, query, body: raw }, res) => {
      // The route's gate admitted a producer before the handler runs.
      const producer = admitted as NonNullable<typeof admitted>;
      if (!mayPost(producer, 'mail')) {
        ctx.metrics.eventsReceived.inc({ source: 'mail', result: 'invalid' });
        return sendError(res, 403, 'SOURCE_NOT_ALLOWED', `key "${producer.name}" may not post source "mail"`, { key: producer.name, source: 'mail' });
      }
      const mailboxId = typeof query.mailbox === 'string' ? query.mailbox : '';
      if (!mailboxId) return sendError(res, 400, 'MISSING_MAILBOX', 'the mailbox query parameter is required (?mailbox=ID)');
      // A mailbox of another tenant is not this key's to know of.
      const mailboxTenant = ctx.mailboxTenants.get(mailboxId);
      if (!ctx.mailboxIds.has(mailboxId) || (mailboxTenant !== undefined && producer.tenant !== undefined && mailboxTenant !== producer.tenant)) {
        ctx.metrics.eventsReceived.inc({ source: 'mail', result: 'invalid' });
        return sendError(res, 404, 'UNKNOWN_MAILBOX', `mailbox "${mailboxId}" is not configured`);
      }
      if (raw.length === 0) {
        ctx.metrics.eventsReceived.inc({ source: 'mail', result: 'invalid' });
        return sendError(res, 400, 'EMPTY_MAIL', 'the body must be one raw MIME message');
      }
      const parsed = await parseRawMail(raw, { mailboxId, maxBytes: ctx.maxMailBytes });
      // The one way in for every mail path: counted and keyed like webhook and IMAP mail.
      await answerAccepted(ctx, res, parsed.messageKey, acceptMail(ctx, parsed, 'mail-raw', mailboxTenant ?? producer.tenant));
    },
    doc: {
      tags: ['intake'],
      summary: 'Post one email as raw MIME',
      parameters: [{ ...mailboxParameter, required: true }],
      requestBody: { required: true, content: { 'message/rfc822': { schema: { type: 'string', contentMediaType: 'message/rfc822' } } } },
      responses: {
        '202': accepted,
        '400': errorResponse('`MISSING_MAILBOX`, `EMPTY_MAIL`, or mail that cannot be parsed'),
        '404': errorResponse('`UNKNOWN_MAILBOX`: no such mailbox configured (or one of another tenant than the key\'s)'),
        ...intakeErrors,
      },
    },
  });
}
