import type { ServerResponse } from 'node:http';
import type { ErrorCode } from '@singleshot/core';
import { sendJson } from './send-json';

/**
 * The one error body of every singleshot HTTP API (ingest, provider webhooks,
 * dashboard admin API): `{ "error": { "code", "message", "details" } }`.
 * `code` is stable (clients branch on it), `message` is for people, `details`
 * is present only when there is something to list (e.g. invalid fields).
 * Headers set before (`Retry-After`, `WWW-Authenticate`) are kept. `code` is
 * one of ERROR_CODES (listed in docs/contract.md).
 */
export function sendError(res: ServerResponse, status: number, code: ErrorCode, message: string, details?: unknown): void {
  sendJson(res, status, { error: details === undefined ? { code, message } : { code, message, details } });
}
