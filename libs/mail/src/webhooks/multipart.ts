/**
 * A small, bounded multipart/form-data parser (RFC 7578) for inbound mail
 * webhooks. Fields stay bytes: SendGrid posts `text` and `html` in the mail's
 * own charset (named in its `charsets` field), and a raw MIME field must reach
 * the MIME parser byte for byte, so decoding as UTF-8 here would lose data.
 *
 * Linear in the body size (one `indexOf` scan per delimiter); the caller has
 * already capped the body. Part count and part header size are capped too, so
 * a hostile body costs no more than a long one.
 */
import { WebhookError } from './webhook-error';

export interface FormField {
  name: string;
  data: Buffer;
  filename?: string;
  /** The part's Content-Type, lower-cased, without parameters. */
  contentType?: string;
  /** The part's declared charset, lower-cased. */
  charset?: string;
}

export interface MultipartLimits {
  maxParts?: number;
  maxPartHeaderBytes?: number;
}

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');

/** Parameters of a header value like `form-data; name="a"; filename="b.txt"`. */
export function headerParams(value: string): { value: string; params: Map<string, string> } {
  const params = new Map<string, string>();
  const semi = value.indexOf(';');
  const head = (semi === -1 ? value : value.slice(0, semi)).trim().toLowerCase();
  const re = /;\s*([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g;
  for (let m = re.exec(value); m !== null; m = re.exec(value)) {
    const key = (m[1] as string).toLowerCase();
    const raw = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : (m[3] ?? '').trim();
    if (!params.has(key)) params.set(key, raw);
  }
  return { value: head, params };
}

/** The boundary of a multipart Content-Type, or null. */
export function multipartBoundary(contentType: string): string | null {
  const { value, params } = headerParams(contentType);
  if (!value.startsWith('multipart/')) return null;
  const boundary = params.get('boundary');
  // RFC 2046 5.1.1: 1 to 70 characters.
  return boundary && boundary.length <= 70 ? boundary : null;
}

function parsePartHeaders(block: string): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of block.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!headers.has(name)) headers.set(name, line.slice(colon + 1).trim());
  }
  return headers;
}

/** Parses a multipart/form-data body into its fields, in order. Throws `INVALID_PAYLOAD` on a broken body. */
export function parseMultipart(body: Buffer, boundary: string, limits: MultipartLimits = {}): FormField[] {
  const maxParts = limits.maxParts ?? 1000;
  const maxHeader = limits.maxPartHeaderBytes ?? 16 * 1024;
  const dash = Buffer.from(`--${boundary}`);
  const delimiter = Buffer.concat([CRLF, dash]);
  const invalid = (why: string) => new WebhookError('INVALID_PAYLOAD', `malformed multipart body: ${why}`);

  // The first delimiter may open the body or follow a preamble.
  let pos: number;
  if (body.subarray(0, dash.length).equals(dash)) pos = dash.length;
  else {
    const first = body.indexOf(delimiter);
    if (first === -1) throw invalid('no boundary found');
    pos = first + delimiter.length;
  }

  const fields: FormField[] = [];
  for (;;) {
    // After a delimiter: "--" closes the body, CRLF opens a part.
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) return fields;
    // Transport padding (RFC 2046) may sit between the boundary and its CRLF.
    while (body[pos] === 0x20 || body[pos] === 0x09) pos++;
    if (body[pos] !== 0x0d || body[pos + 1] !== 0x0a) throw invalid('boundary not followed by CRLF');
    pos += 2;
    if (fields.length >= maxParts) throw invalid(`more than ${maxParts} parts`);

    const headerEnd = body.indexOf(HEADER_END, pos);
    // A part without headers starts with the empty line at once.
    const emptyHeaders = body[pos] === 0x0d && body[pos + 1] === 0x0a;
    const headersStop = emptyHeaders ? pos : headerEnd;
    if (headersStop === -1 || headersStop - pos > maxHeader) throw invalid('part headers missing or too large');
    const headers = parsePartHeaders(body.subarray(pos, headersStop).toString('latin1'));
    const dataStart = emptyHeaders ? pos + 2 : headerEnd + HEADER_END.length;

    const next = body.indexOf(delimiter, dataStart);
    if (next === -1) throw invalid('unterminated part');
    const disposition = headerParams(headers.get('content-disposition') ?? '');
    const name = disposition.params.get('name');
    if (disposition.value === 'form-data' && name !== undefined) {
      const field: FormField = { name: Buffer.from(name, 'latin1').toString('utf8'), data: body.subarray(dataStart, next) };
      const filename = disposition.params.get('filename');
      if (filename !== undefined) field.filename = Buffer.from(filename, 'latin1').toString('utf8');
      const type = headers.get('content-type');
      if (type) {
        const parsed = headerParams(type);
        field.contentType = parsed.value;
        const charset = parsed.params.get('charset');
        if (charset) field.charset = charset.toLowerCase();
      }
      fields.push(field);
    }
    pos = next + delimiter.length;
  }
}

/**
 * Parses an application/x-www-form-urlencoded body to byte values. Not
 * `URLSearchParams`: it decodes every value as UTF-8, which would mangle a
 * raw MIME field holding 8-bit Latin-1 text.
 */
export function parseUrlEncoded(body: Buffer, limits: { maxFields?: number } = {}): FormField[] {
  const maxFields = limits.maxFields ?? 1000;
  const fields: FormField[] = [];
  const text = body.toString('latin1');
  if (text.length === 0) return fields;
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    if (fields.length >= maxFields) throw new WebhookError('INVALID_PAYLOAD', `more than ${maxFields} form fields`);
    const eq = pair.indexOf('=');
    const rawName = eq === -1 ? pair : pair.slice(0, eq);
    const rawValue = eq === -1 ? '' : pair.slice(eq + 1);
    fields.push({ name: percentDecode(rawName).toString('utf8'), data: percentDecode(rawValue) });
  }
  return fields;
}

function percentDecode(value: string): Buffer {
  const out = Buffer.alloc(value.length);
  let n = 0;
  for (let i = 0; i < value.length; i++) {
    const ch = value.charCodeAt(i);
    if (ch === 0x2b) {
      out[n++] = 0x20;
    } else if (ch === 0x25 && /^[0-9A-Fa-f]{2}$/.test(value.slice(i + 1, i + 3))) {
      out[n++] = parseInt(value.slice(i + 1, i + 3), 16);
      i += 2;
    } else {
      out[n++] = ch & 0xff;
    }
  }
  return out.subarray(0, n);
}
