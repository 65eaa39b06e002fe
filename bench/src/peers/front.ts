import express from 'express';
import type { Server } from 'node:http';
import { Pool } from 'undici';

/** One arrival as the driver posts it. */
export interface Arrival {
  id: string;
  recipients: string[];
  data: { benchEvent: string };
}

/**
 * The HTTP front every peer shares (Express 5 and its JSON parser, the stack
 * singleshot's ingest uses): `POST /v1/events` answers 202 once `accept` has
 * stored the arrival, 400 for a body without id and recipients, 503 when the
 * store fails.
 */
export async function startFront(port: number, accept: (a: Arrival) => Promise<'accepted' | 'duplicate'>): Promise<Server> {
  const app = express();
  app.use(express.json({ limit: '256kb' }));
  app.post('/v1/events', (req, res) => {
    const body = req.body as Partial<Arrival> | undefined;
    if (!body || typeof body.id !== 'string' || !Array.isArray(body.recipients) || typeof body.data?.benchEvent !== 'string') {
      res.status(400).json({ error: 'id, recipients and data.benchEvent are required' });
      return;
    }
    accept(body as Arrival).then(
      (status) => res.status(202).json({ status }),
      (err: unknown) => res.status(503).json({ error: String(err) }),
    );
  });
  app.get('/healthz', (_req, res) => {
    res.json({ ok: true });
  });
  return await new Promise((resolve) => {
    const server = app.listen(port, '127.0.0.1', () => resolve(server));
  });
}

/** The provider call every peer makes: the same JSON body and Idempotency-Key singleshot's HTTP provider sends. */
export function providerClient(sinkUrl: string, connections: number): (operationKey: string, recipient: string, event: string) => Promise<void> {
  const pool = new Pool(sinkUrl, { connections, pipelining: 1 });
  return async (operationKey, recipient, event) => {
    const res = await pool.request({
      method: 'POST',
      path: '/send',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'idempotency-key': operationKey },
      body: JSON.stringify({ operationKey, recipient, channel: 'webhook', subject: `Order ${event}`, text: `Order ${event} was created`, data: { benchEvent: event, orderId: event } }),
    });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`provider answered ${res.statusCode}: ${text}`);
  };
}
