import type { ServerResponse } from 'node:http';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Answers `status` with `body` as JSON (`Content-Type: application/json;
 * charset=utf-8`, `Content-Length`, `Cache-Control: no-store`), without
 * Express's response machinery (no ETag: an API answer is never revalidated,
 * and no cache may keep it: it can name recipients, and a probe's answer is
 * about this moment). Headers set before (`Retry-After`, `WWW-Authenticate`)
 * are kept: node merges them.
 */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  // One writeHead with a flat list is node's cheapest way to a header block.
  res.writeHead(status, ['content-type', JSON_TYPE, 'content-length', String(Buffer.byteLength(text)), 'cache-control', 'no-store']);
  res.end(text);
}
