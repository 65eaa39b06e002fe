import { Router } from 'express';
import { verifyDocumentLink, type DocumentStore } from '@singleshot/documents';
import type { Logger } from '@singleshot/observability';
import { sendError } from '@singleshot/http';

export interface DocumentLinkDeps {
  store: Pick<DocumentStore, 'get'>;
  /** The links' HMAC key (configured, or the one kept in Redis). */
  secret(): Promise<string>;
  logger: Logger;
}

const STORE_KEY = /^[0-9a-f]{64}\/[a-z0-9._-]{1,120}$/;

/**
 * `GET /v1/documents/<document key>/<file>?expires=…&sig=…`: a generated
 * document behind a time-limited signed link (emails past the attachment
 * size limit, webhook payloads). 403 for a bad signature, 410 once expired,
 * 404 when the store does not have it.
 */
export function documentsRouter(deps: DocumentLinkDeps): Router {
  const router = Router();
  router.get('/:documentKey/:file', async (req, res) => {
    const storeKey = `${req.params.documentKey}/${req.params.file}`;
    const expires = typeof req.query.expires === 'string' ? req.query.expires : '';
    const sig = typeof req.query.sig === 'string' ? req.query.sig : '';
    if (!STORE_KEY.test(storeKey)) return sendError(res, 404, 'NOT_FOUND', 'no such document');
    let bytes: Buffer | null;
    try {
      const verdict = verifyDocumentLink({ storeKey, expires, sig, secret: await deps.secret() });
      if (verdict === 'invalid') return sendError(res, 403, 'BAD_LINK', 'the link signature is missing or invalid');
      if (verdict === 'expired') return sendError(res, 410, 'LINK_EXPIRED', 'the link has expired; ask for the document again');
      bytes = await deps.store.get(storeKey);
    } catch (err) {
      // Redis (the link key) or the document store is away: try again later, never a 500.
      deps.logger.warn({ event: 'document_download_failed', err, storeKey }, 'document download failed');
      res.set('Retry-After', '5');
      return sendError(res, 503, 'STORE_UNAVAILABLE', 'the document store is not reachable; retry later');
    }
    if (!bytes) return sendError(res, 404, 'NOT_FOUND', 'no such document (kept for the retention period)');
    res.set('Content-Type', storeKey.endsWith('.pdf') ? 'application/pdf' : 'application/octet-stream');
    res.set('Content-Disposition', `attachment; filename="${req.params.file}"`);
    res.set('Cache-Control', 'private, no-store');
    res.send(bytes);
  });
  return router;
}
