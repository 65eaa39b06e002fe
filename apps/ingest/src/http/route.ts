import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ParsedUrlQuery } from 'node:querystring';
import type { z } from 'zod';
import type { ErrorCode } from '@singleshot/core';
import type { BodyReadError, OperationDoc } from '@singleshot/http';
import type { Producer } from '../producer-auth';

/** What a route's handler gets: the request, its decoded path parameters, query and body. */
export interface RouteRequest<B> {
  readonly req: IncomingMessage;
  readonly params: Readonly<Record<string, string>>;
  /** As Express 5's default parser reads it (node's querystring): a repeated key is an array. */
  readonly query: ParsedUrlQuery;
  /** The validated JSON body (`json` routes), else the raw bytes (empty without `bodyLimit`). */
  readonly body: B;
  /** The admitted producer (`gate: 'producer'` routes). */
  readonly producer: Producer | undefined;
  /** A header as one string (node joins repeated custom headers with ", "). */
  header(name: string): string | undefined;
}

/** A JSON body checked against one zod schema, which the OpenAPI document shows too. */
export interface JsonBody<S extends z.ZodType> {
  schema: S;
  /** Its name under `components.schemas` in the document. */
  name: string;
  /** Deeper bodies are refused before parsing (`ingest.maxJsonDepth`). */
  maxDepth: number;
  /** The error of a body off the schema (also of one nested too deep). */
  invalid: { code: ErrorCode; message: string };
  /** Called for every refused body (a counter). */
  onRejected?(): void;
}

/** One operation of the OpenAPI document, but a JSON route's request body (that comes from its schema). */
export type RouteDoc = OperationDoc;

/**
 * One ingest endpoint: everything the server, the metrics and the OpenAPI
 * document know of it. `path` is Express-style (`/v1/mail/inbound/:provider`)
 * and is the `route` label of `singleshot_ingest_request_duration_seconds`.
 * `gate` says what runs before the route counts as matched (answers before
 * that are labelled `unmatched`):
 * - `producer`: the in-flight cap, the body (signatures cover its bytes), then
 *   producer authentication (401) and the key's rate limit (429);
 * - `shed`: the in-flight cap only (the route authenticates its own way);
 * - `open`: nothing (probes, the document).
 */
export interface IngestRoute {
  readonly method: 'GET' | 'POST' | 'PUT';
  readonly path: string;
  readonly gate: 'producer' | 'shed' | 'open';
  /** Read the body, inflated, up to this many bytes. */
  readonly bodyLimit?: number;
  readonly json?: JsonBody<z.ZodType>;
  /** How a body that could not be read is answered (default: 413 `BODY_TOO_LARGE`, or 4xx `BAD_REQUEST`). */
  readonly bodyRefused?: (res: ServerResponse, error: BodyReadError, params: Readonly<Record<string, string>>) => void;
  /** Answers the request; a rejection is a 500. */
  readonly handle: (request: RouteRequest<unknown>, res: ServerResponse) => void | Promise<void>;
  readonly doc: RouteDoc;
}

type Spec = Omit<IngestRoute, 'json' | 'handle'>;

/** A route whose handler gets the raw body bytes (or none). */
export function rawRoute(spec: Spec & { handle(request: RouteRequest<Buffer>, res: ServerResponse): void | Promise<void> }): IngestRoute {
  return spec as IngestRoute;
}

/** A route whose handler gets the body as `json.schema` outputs it. */
export function jsonRoute<S extends z.ZodType>(
  spec: Spec & { bodyLimit: number; json: JsonBody<S>; handle(request: RouteRequest<z.output<S>>, res: ServerResponse): void | Promise<void> },
): IngestRoute {
  return spec as unknown as IngestRoute;
}
