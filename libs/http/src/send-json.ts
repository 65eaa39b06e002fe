import type { ServerResponse } from 'node:http';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Answers `status` with `body` as JSON (`Content-Type: application/json;
 * charset=utf-8`, `Content-Length`), without Express's response machinery
 * (no ETag: an API answer is never revalidated). Headers set before
 * (`Retry-After`, `WWW-Authenticate`) are kept: node merges them.
 */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  // One writeHead with a flat list is node's cheapest way to a header block.
  res.writeHead(status, ['content-type', JSON_TYPE, 'content-length', String(Buffer.byteLength(text))]);
  res.end(text);
}
