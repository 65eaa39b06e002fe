import type { ServerResponse } from 'node:http';

/**
 * The one error body of every singleshot HTTP API (ingest, provider webhooks,
 * dashboard admin API): `{ "error": { "code", "message", "details" } }`.
 * `code` is stable (clients branch on it), `message` is for people, `details`
 * is present only when there is something to list (e.g. invalid fields).
 * Headers set before (`Retry-After`, `WWW-Authenticate`) are kept.
 */
export function sendError(res: ServerResponse, status: number, code: string, message: string, details?: unknown): void {
  const text = JSON.stringify({ error: { code, message, ...(details === undefined ? {} : { details }) } });
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', Buffer.byteLength(text));
  res.end(text);
}
