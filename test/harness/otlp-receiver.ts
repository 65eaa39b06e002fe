import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP/HTTP exporter sent it, flattened for assertions. */
export interface ReceivedSpan {
  /** The resource's `service.name`. */
  service: string;
  /** The resource's `process.pid`. */
  pid: number | undefined;
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  links: Array<{ traceId: string; spanId: string }>;
}

/** A running receiver. */
export interface OtlpReceiver {
  /** The base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` takes it (the exporter appends `/v1/traces`). */
  url: string;
  spans: ReceivedSpan[];
  /** Requests it could not decode (a protobuf body, bad JSON): a test expects none. */
  rejected: Array<{ contentType: string | undefined; reason: string }>;
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value?: AnyValue };
type JsonSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  attributes?: KeyValue[];
  links?: Array<{ traceId: string; spanId: string }>;
};
type ExportRequest = { resourceSpans?: Array<{ resource?: { attributes?: KeyValue[] }; scopeSpans?: Array<{ spans?: JsonSpan[] }> }> };

/**
 * A real OTLP/HTTP trace receiver on 127.0.0.1 (ephemeral port): `POST
 * /v1/traces` with the JSON encoding of ExportTraceServiceRequest, which is
 * what @opentelemetry/exporter-trace-otlp-http sends (ids as hex strings).
 * It decodes every span, answers `200 {}` as a collector does, and refuses
 * (415) any other encoding, recording why.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const rejected: OtlpReceiver['rejected'] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const contentType = req.headers['content-type'];
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      if (!contentType?.startsWith('application/json')) {
        rejected.push({ contentType, reason: 'not JSON' });
        res.writeHead(415).end();
        return;
      }
      try {
        spans.push(...decode(JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch (err) {
        rejected.push({ contentType, reason: String(err) });
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    rejected,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function decode(request: ExportRequest): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const resource = attributesOf(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const span of ss.spans ?? []) {
        if (!/^[0-9a-f]{32}$/.test(span.traceId) || !/^[0-9a-f]{16}$/.test(span.spanId)) throw new Error(`span ${span.name}: ids are not hex`);
        out.push({
          service: String(resource['service.name'] ?? ''),
          pid: typeof resource['process.pid'] === 'number' ? resource['process.pid'] : undefined,
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? '',
          name: span.name,
          kind: span.kind ?? 0,
          attributes: attributesOf(span.attributes),
          links: (span.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
        });
      }
    }
  }
  return out;
}

function attributesOf(list: KeyValue[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    if (!value) continue;
    if (value.stringValue !== undefined) out[key] = value.stringValue;
    else if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else if (value.boolValue !== undefined) out[key] = value.boolValue;
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue;
  }
  return out;
}
