import { verifyDocumentLink, type DocumentStore } from '@singleshot/documents';
import { errorResponse, retryAfterHeader, type Logger } from '@singleshot/observability';
import { sendError } from '@singleshot/http';
import { rawRoute, type IngestRoute } from '../http/route';

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
export function documentsRoute(deps: DocumentLinkDeps): IngestRoute {
  return rawRoute({
    method: 'GET',
    path: '/v1/documents/:documentKey/:file',
    gate: 'shed',
    handle: async ({ params, query }, res) => {
      const file = params.file as string;
      const storeKey = `${params.documentKey}/${file}`;
      const expires = typeof query.expires === 'string' ? query.expires : '';
      const sig = typeof query.sig === 'string' ? query.sig : '';
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
        res.setHeader('retry-after', '5');
        return sendError(res, 503, 'STORE_UNAVAILABLE', 'the document store is not reachable; retry later');
      }
      if (!bytes) return sendError(res, 404, 'NOT_FOUND', 'no such document (kept for the retention period)');
      // The file name passed STORE_KEY: no quote or control character can reach the header.
      res.writeHead(200, {
        'content-type': storeKey.endsWith('.pdf') ? 'application/pdf' : 'application/octet-stream',
        'content-disposition': `attachment; filename="${file}"`,
        'cache-control': 'private, no-store',
        'content-length': String(bytes.length),
      });
      res.end(bytes);
    },
    doc: {
      tags: ['documents'],
      summary: 'Download a generated document through its signed link',
      security: [{}],
      parameters: [
        { name: 'documentKey', in: 'path', required: true, schema: { type: 'string', pattern: '^[0-9a-f]{64}$' } },
        { name: 'file', in: 'path', required: true, schema: { type: 'string', pattern: '^[a-z0-9._-]{1,120}$' } },
        { name: 'expires', in: 'query', required: true, schema: { type: 'string' }, description: 'Expiry of the link (as signed)' },
        { name: 'sig', in: 'query', required: true, schema: { type: 'string' }, description: 'The link signature' },
      ],
      responses: {
        '200': { description: 'The document', content: { 'application/pdf': { schema: { type: 'string', contentMediaType: 'application/pdf' } }, 'application/octet-stream': { schema: { type: 'string' } } } },
        '403': errorResponse('The link signature is missing or invalid (code `BAD_LINK`)'),
        '404': errorResponse('No such document, or past retention (code `NOT_FOUND`)'),
        '410': errorResponse('The link has expired (code `LINK_EXPIRED`)'),
        '500': errorResponse('Internal error'),
        '503': errorResponse('The document store or Redis is not reachable (code `STORE_UNAVAILABLE`)', retryAfterHeader),
      },
    },
  });
}
