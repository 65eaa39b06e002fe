/**
 * One-click unsubscribe (RFC 8058) of one email: the signed HTTPS URL
 * (answered by ingest's `POST /v1/unsubscribe/<token>`) and an optional
 * `mailto:` address. Delivery computes it for routes with a `category`;
 * the email providers turn it into headers.
 */
export interface ListUnsubscribe {
  url: string;
  mailto?: string;
}

/** The header value RFC 8058 asks for next to an HTTPS `List-Unsubscribe` URI. */
export const LIST_UNSUBSCRIBE_POST = 'List-Unsubscribe=One-Click';

/**
 * `List-Unsubscribe` (RFC 2369: `<https…>, <mailto:…>`) and
 * `List-Unsubscribe-Post`, as name/value pairs for any provider's header list.
 */
export function listUnsubscribeHeaders(lu: ListUnsubscribe): Array<{ name: string; value: string }> {
  const uris = [`<${lu.url}>`, ...(lu.mailto ? [`<mailto:${lu.mailto}?subject=unsubscribe>`] : [])];
  return [
    { name: 'List-Unsubscribe', value: uris.join(', ') },
    { name: 'List-Unsubscribe-Post', value: LIST_UNSUBSCRIBE_POST },
  ];
}

/** The same headers as one object (nodemailer's and SendGrid's `headers`); none without `lu`. */
export function listUnsubscribeRecord(lu: ListUnsubscribe | undefined): Record<string, string> {
  return lu ? Object.fromEntries(listUnsubscribeHeaders(lu).map((h) => [h.name, h.value])) : {};
}
