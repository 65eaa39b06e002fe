import type { Config } from './schema';

export const REDACTED = '[redacted]';

const SECRET_KEYS = new Set(['password', 'secret', 'token', 'signingSecrets', 'signingKey', 'key', 'apiKey', 'authToken', 'secretAccessKey', 'sessionToken']);
/** Header names whose values are credentials (provider `headers`). */
const SECRET_HEADER = /authorization|cookie|token|secret|key|signature|password/i;

/**
 * A deep copy with every secret replaced by `"[redacted]"`, for logging the
 * effective config at start: passwords, tokens, signing secrets (each one, so
 * their count stays visible), credential-like provider headers, and the
 * password inside a URL (`redis://user:pass@host`).
 */
export function redactConfig<T extends Config>(config: T): T {
  return redactNode(config, undefined) as T;
}

function redactNode(node: unknown, key: string | undefined): unknown {
  if (key !== undefined && SECRET_KEYS.has(key) && node !== undefined) {
    return Array.isArray(node) ? node.map(() => REDACTED) : REDACTED;
  }
  if (Array.isArray(node)) return node.map((item) => redactNode(item, undefined));
  if (typeof node === 'object' && node !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) {
      out[k] = k === 'headers' && isStringRecord(v) ? redactHeaders(v) : redactNode(v, k);
    }
    return out;
  }
  if (typeof node === 'string' && /^[a-z][a-z0-9+.-]*:\/\//i.test(node)) return redactUrl(node);
  return node;
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === 'string')
  );
}

function redactHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, SECRET_HEADER.test(name) ? REDACTED : value]));
}

/** Masks the password of `scheme://user:password@host`; anything unparsable is left alone. */
export function redactUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return value;
  }
  if (!url.password) return value;
  // Rebuilding through URL would percent-encode the marker; splice the original text instead.
  return value.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/?#@]*:)[^/?#]*@/i, `$1${REDACTED}@`);
}
