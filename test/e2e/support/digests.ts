import type { HttpSink } from '@singleshot/test-harness';

/** A digest route of the digest e2e tests: events of `source`, one webhook digest per recipient, its items' ids in the text. */
export function digestRoute(name: string, source: string, digest: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    match: { source },
    action: 'notify',
    channel: 'webhook',
    recipients: 'event',
    template: { subject: '{{count}} updates', text: '{{#each items}}{{id}} {{/each}}' },
    digest,
    ...extra,
  };
}

/** One digest message as the sink accepted it. */
export interface SinkDigest {
  operationKey: string;
  recipient: string;
  key: string;
  /** The digest's stored close time (its window). */
  closeAt: number;
  count: number;
  ids: string[];
  /** How many POSTs the sink accepted for it (1 for exactly once). */
  accepted: number;
}

interface DigestBody {
  recipient: string;
  data?: { digest?: { key: string; closeAt: number }; items?: Array<{ id: string }>; count?: number };
}

/** Every digest the sink accepted (bodies that carry `data.digest`), with its items' event ids in order. */
export function sinkDigests(sink: HttpSink): SinkDigest[] {
  const out: SinkDigest[] = [];
  for (const [operationKey, acc] of sink.accepted) {
    const body = acc.body as DigestBody;
    if (!body?.data?.digest) continue;
    out.push({
      operationKey,
      recipient: body.recipient,
      key: body.data.digest.key,
      closeAt: body.data.digest.closeAt,
      count: body.data.count ?? -1,
      ids: (body.data.items ?? []).map((i) => i.id),
      accepted: acc.count,
    });
  }
  return out;
}

/** Each event id's number of appearances across `digests`. */
export function appearances(digests: readonly SinkDigest[]): Map<string, number> {
  const seen = new Map<string, number>();
  for (const d of digests) for (const id of d.ids) seen.set(id, (seen.get(id) ?? 0) + 1);
  return seen;
}
