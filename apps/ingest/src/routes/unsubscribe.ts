import type { ServerResponse } from 'node:http';
import { verifyUnsubscribeToken, type UnsubscribeClaim } from '@singleshot/core';
import { errorResponse, retryAfterHeader, type Logger } from '@singleshot/observability';
import type { OptOut, Suppressions } from '@singleshot/store';
import { rawRoute, type IngestRoute, type RouteDoc } from '../http/route';
import { confirmPage, donePage, refusedPage, sendPage } from './unsubscribe-pages';

/** What the unsubscribe routes need. */
export interface UnsubscribeDeps {
  suppressions: Pick<Suppressions, 'get' | 'addOptOut'>;
  /** The tokens' HMAC key (configured, or the one kept in Redis), read once per process. */
  secret(): Promise<string>;
  logger: Logger;
  now?: () => number;
}

const PATH = '/v1/unsubscribe/:token';
// A one-click POST body is `List-Unsubscribe=One-Click`; anything more is not read.
const BODY_LIMIT = 1_024;

const covers = (o: OptOut, claim: UnsubscribeClaim) => (o.channel === undefined || o.channel === claim.channel) && (o.category === undefined || o.category === claim.category);

/**
 * `GET` and `POST /v1/unsubscribe/<token>` (RFC 8058 one-click unsubscribe,
 * docs/preferences.md): the only endpoints without credentials, because the
 * signed token is the credential. A GET shows a confirmation page and
 * changes nothing (link scanners follow GETs); a POST, from the mail client
 * or the page's button, opts the recipient out of the token's category on
 * its channel. A repeated POST answers the same and writes nothing.
 */
export function unsubscribeRoutes(deps: UnsubscribeDeps): IngestRoute[] {
  const now = deps.now ?? Date.now;

  /** The token's claim, or the page that refuses it (already sent). */
  const claimOf = async (token: string | undefined, res: ServerResponse): Promise<UnsubscribeClaim | undefined> => {
    const verdict = verifyUnsubscribeToken(token ?? '', await deps.secret(), now());
    if (verdict.ok) return verdict.claim;
    // The token itself is the recipient's credential: never logged.
    deps.logger.info({ event: 'unsubscribe_refused', reason: verdict.reason }, 'unsubscribe link refused');
    if (verdict.reason === 'expired') sendPage(res, 410, refusedPage('UNSUBSCRIBE_EXPIRED', 'This link has expired. Use the link of a more recent message.'));
    else sendPage(res, 400, refusedPage('BAD_UNSUBSCRIBE_TOKEN', 'This link is incomplete or was changed. Use the link exactly as the message gave it.'));
    return undefined;
  };

  const unavailable = (res: ServerResponse, err: unknown) => {
    deps.logger.warn({ event: 'preferences_store_unavailable', err: { code: (err as { code?: unknown }).code, message: (err as Error).message } }, 'unsubscribe not carried out: Redis unavailable');
    res.setHeader('retry-after', '5');
    sendPage(res, 503, refusedPage('STORE_UNAVAILABLE', 'We could not record this right now. Please try again in a minute.'));
  };

  /** Adds the claim's opt-out unless one already covers it; true when it wrote. */
  const optOut = async (claim: UnsubscribeClaim): Promise<boolean> => {
    const record = await deps.suppressions.get(claim.recipient);
    // A broader opt-out (all categories, all channels) already covers it: nothing to write.
    if (record.optOuts.some((o) => covers(o, claim))) return false;
    // One step with the version (suppression-write.lua): a producer's PUT at the same moment is never lost.
    return deps.suppressions.addOptOut(claim.recipient, { channel: claim.channel, category: claim.category }, 'unsubscribe:one-click');
  };

  const get = rawRoute({
    method: 'GET',
    path: PATH,
    gate: 'shed',
    handle: async ({ params, req }, res) => {
      try {
        const claim = await claimOf(params.token, res);
        if (!claim) return;
        sendPage(res, 200, confirmPage(claim, (req.url ?? '').split('?')[0] as string));
      } catch (err) {
        unavailable(res, err);
      }
    },
    doc: unsubscribeDoc('A confirmation page with an Unsubscribe button (a form POST to the same URL); changes nothing', 'The confirmation page'),
  });
  const post = rawRoute({
    method: 'POST',
    path: PATH,
    gate: 'shed',
    bodyLimit: BODY_LIMIT,
    handle: async ({ params }, res) => {
      try {
        const claim = await claimOf(params.token, res);
        if (!claim) return;
        const wrote = await optOut(claim);
        if (wrote) deps.logger.info({ event: 'unsubscribed', channel: claim.channel, category: claim.category }, 'recipient unsubscribed (one-click)');
        sendPage(res, 200, donePage(claim));
      } catch (err) {
        unavailable(res, err);
      }
    },
    doc: unsubscribeDoc('One-click unsubscribe (RFC 8058): opts the recipient out of the category on the channel; a repeated POST changes nothing', 'Unsubscribed (now or before)'),
  });
  return [get, post];
}

function unsubscribeDoc(summary: string, ok: string): RouteDoc {
  const html = (description: string) => ({ description, content: { 'text/html': { schema: { type: 'string' } } } });
  return {
    tags: ['preferences'],
    summary,
    // The signed token is the credential.
    security: [{}],
    parameters: [{ name: 'token', in: 'path', required: true, schema: { type: 'string', maxLength: 2048 }, description: 'The signed token of the `List-Unsubscribe` URL' }],
    responses: {
      '200': html(ok),
      '400': html('The token is malformed or its signature is invalid (code `BAD_UNSUBSCRIBE_TOKEN` in the page); nothing changed'),
      '410': html('The link has expired (code `UNSUBSCRIBE_EXPIRED` in the page); nothing changed'),
      '413': errorResponse('The body exceeds 1 KiB (code `BODY_TOO_LARGE`)'),
      '500': errorResponse('Internal error'),
      '503': { ...html('Redis is not reachable (code `STORE_UNAVAILABLE` in the page); retry'), headers: retryAfterHeader },
    },
  };
}
