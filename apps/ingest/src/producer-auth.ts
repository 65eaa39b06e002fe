import type { ApiKeyConfig, IngestConfig } from '@singleshot/config';
import { SingleshotError } from '@singleshot/core';
import type { ServerResponse } from 'node:http';
import { findSecret, isLoopbackHost, secretDigest, sendError, type BucketRate } from '@singleshot/http';
import { verifySignature } from './signature';

/** Who posted a request: a named API key, an HMAC-signed request, or anonymous (loopback or `allowAnonymous`). */
export interface Producer {
  /** The key's `name` (metric label), `hmac` or `anonymous`; never the key itself. */
  name: string;
  /** Sources it may post; undefined = any. */
  sources: ReadonlySet<string> | undefined;
  /** The tenant the key is bound to (`ingest.apiKeys[].tenant`); undefined: the default tenant, and any message by its key. */
  tenant: string | undefined;
  rate: BucketRate;
}

export type AuthOutcome = { ok: true; producer: Producer } | { ok: false; code: 'UNAUTHORIZED' | 'BAD_SIGNATURE'; message: string };

/** ingest refuses to start: a public address without producer credentials. */
export class IngestStartError extends SingleshotError {}

/**
 * Producer authentication: `Authorization: Bearer <key>` against
 * `ingest.apiKeys` (sha256 digests compared in constant time, every key
 * checked), or the HMAC body signature against `ingest.signingSecrets`.
 * Without either configured every caller is `anonymous`, which
 * `resolveIngestHost` allows on loopback only (or by `allowAnonymous`).
 */
export class ProducerAuth {
  private readonly digests: Buffer[];
  private readonly keys: ApiKeyConfig[];
  readonly required: boolean;

  // Built once: a request's outcome is one of these, not a new object per request.
  private readonly byKey: AuthOutcome[];
  private readonly anonymous: AuthOutcome;
  private readonly hmac: AuthOutcome;

  constructor(private readonly config: Pick<IngestConfig, 'apiKeys' | 'signingSecrets' | 'rateLimit'>) {
    this.keys = config.apiKeys;
    this.digests = config.apiKeys.map((k) => secretDigest(k.key ?? ''));
    this.required = config.apiKeys.length > 0 || config.signingSecrets.length > 0;
    this.byKey = config.apiKeys.map((key) => ({
      ok: true,
      producer: { name: key.name, sources: key.sources.includes('*') ? undefined : new Set(key.sources), tenant: key.tenant, rate: key.rateLimit ?? config.rateLimit },
    }));
    this.anonymous = { ok: true, producer: { name: 'anonymous', sources: undefined, tenant: undefined, rate: config.rateLimit } };
    this.hmac = { ok: true, producer: { name: 'hmac', sources: undefined, tenant: undefined, rate: config.rateLimit } };
  }

  /** Checks a request's credentials (the raw body is needed for the HMAC). */
  authenticate(authorization: string | undefined, signature: string | undefined, rawBody: Buffer): AuthOutcome {
    if (!this.required) return this.anonymous;
    const bearer = /^bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
    if (bearer !== undefined && this.keys.length > 0) {
      const outcome = this.byKey[findSecret(bearer, this.digests)];
      if (!outcome) return { ok: false, code: 'UNAUTHORIZED', message: 'the bearer key is not valid' };
      return outcome;
    }
    if (this.config.signingSecrets.length > 0 && signature !== undefined) {
      if (verifySignature(rawBody, signature, this.config.signingSecrets)) return this.hmac;
      return { ok: false, code: 'BAD_SIGNATURE', message: 'missing or invalid x-singleshot-signature header' };
    }
    const ways = [this.keys.length > 0 ? 'an Authorization: Bearer <key> header' : '', this.config.signingSecrets.length > 0 ? 'an x-singleshot-signature header' : '']
      .filter(Boolean)
      .join(' or ');
    return this.config.signingSecrets.length > 0 && this.keys.length === 0
      ? { ok: false, code: 'BAD_SIGNATURE', message: 'missing or invalid x-singleshot-signature header' }
      : { ok: false, code: 'UNAUTHORIZED', message: `authentication required: ${ways}` };
  }
}

/**
 * Refuses a key bound to a tenant what every tenant shares (a recipient's
 * preferences): one tenant must not change, nor read, what holds back
 * another's notifications. True when it answered 403 `TENANT_NOT_ALLOWED`.
 */
export function refuseTenantKey(producer: Producer | undefined, res: ServerResponse, what: string): boolean {
  if (producer?.tenant === undefined) return false;
  sendError(res, 403, 'TENANT_NOT_ALLOWED', `key "${producer.name}" is bound to tenant "${producer.tenant}": ${what} are kept for every tenant, and only a key without a tenant may use them`);
  return true;
}

/** True when `producer` may post events of `source`. */
export function mayPost(producer: Producer, source: string): boolean {
  return producer.sources === undefined || producer.sources.has(source);
}

/**
 * The address ingest listens on. Unset: every interface when producers must
 * authenticate, else loopback. A non-loopback address without credentials
 * throws `INGEST_AUTH_REQUIRED` unless `allowAnonymous` says so.
 */
export function resolveIngestHost(config: IngestConfig, override?: string): string {
  const hasCredentials = config.apiKeys.length > 0 || config.signingSecrets.length > 0;
  const host = override ?? config.host ?? (hasCredentials ? '0.0.0.0' : '127.0.0.1');
  if (!hasCredentials && !config.allowAnonymous && !isLoopbackHost(host)) {
    throw new IngestStartError(
      `refusing to start ingest on ${host} without producer credentials: anyone who can reach it could make singleshot send notifications. ` +
        'Configure ingest.apiKeys (or ingest.signingSecrets), listen on loopback (ingest.host: 127.0.0.1), ' +
        'or set ingest.allowAnonymous: true if a network boundary already authenticates producers.',
      'INGEST_AUTH_REQUIRED',
    );
  }
  return host;
}
