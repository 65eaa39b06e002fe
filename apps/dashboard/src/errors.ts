import type { NextFunction, Request, Response } from 'express';
import { SingleshotError, type ErrorCode } from '@singleshot/core';
import { sendError } from '@singleshot/http';
import { UpgradeRequiredError, layoutRefusal } from '@singleshot/store';
import type { Logger } from '@singleshot/observability';

/**
 * An admin API failure with its HTTP status. Handlers throw it; the error
 * middleware answers `{ error: { code, message, details } }`, the same shape as
 * the ingest API.
 */
export class ApiError extends SingleshotError {
  declare readonly code: ErrorCode;
  constructor(
    readonly status: number,
    code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message, code);
  }
}

/** The dashboard refuses to start (e.g. a public address without credentials). */
export class DashboardStartError extends SingleshotError {}

/** Last middleware of the admin API: ApiError → its status, a newer Redis layout → 503, anything else → 500 (logged). */
export function apiErrorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    if (err instanceof ApiError) {
      sendError(res, err.status, err.code, err.message, err.details);
      return;
    }
    if (err instanceof UpgradeRequiredError) {
      // Nothing was done; a process of the newer version can do it.
      layoutRefusal.note(err.held);
      res.setHeader('retry-after', '1');
      sendError(res, 503, 'UPGRADE_REQUIRED', err.message);
      return;
    }
    const e = err as { type?: string; status?: number; expose?: boolean; message?: string };
    // body-parser errors (malformed JSON, too large) are the client's.
    if (typeof e.status === 'number' && e.status >= 400 && e.status < 500 && e.expose) {
      sendError(res, e.status, e.type === 'entity.too.large' ? 'BODY_TOO_LARGE' : 'BAD_REQUEST', e.message ?? 'bad request');
      return;
    }
    logger.error({ event: 'request_failed', err, method: req.method, path: req.path }, 'admin API request failed');
    sendError(res, 500, 'INTERNAL', 'internal error');
  };
}
