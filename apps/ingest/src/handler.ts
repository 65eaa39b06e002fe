import type { RequestListener } from 'node:http';
import { createIngestApp, type IngestAppOptions } from './app';
import { withFastEvents } from './fast-events';
import { IntakeGate } from './intake-gate';

/**
 * The ingest server's request listener: the fast `POST /v1/events` path in
 * front of the Express app, both behind one intake gate (in-flight cap, rate
 * buckets). `startIngest` serves this; tests may serve it on their own server.
 */
export function createIngestHandler(options: Omit<IngestAppOptions, 'gate'>): RequestListener {
  const gate = new IntakeGate(options.ctx);
  return withFastEvents(options.ctx, gate, createIngestApp({ ...options, gate }));
}
