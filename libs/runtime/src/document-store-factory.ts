import { randomBytes } from 'node:crypto';
import type { RedisClient } from '@singleshot/store';
import type { DocumentsConfig } from '@singleshot/config';
import { FsDocumentStore, S3DocumentStore, type DocumentStore } from '@singleshot/documents';
import type { KeyBuilder } from '@singleshot/store';

/** The configured document store: the filesystem (default) or S3-compatible. */
export function createDocumentStore(config: DocumentsConfig['store']): DocumentStore {
  if (config.type === 's3') {
    return new S3DocumentStore({
      bucket: config.bucket,
      prefix: config.prefix,
      region: config.region,
      ...(config.endpoint ? { endpoint: config.endpoint } : {}),
      ...(config.forcePathStyle !== undefined ? { forcePathStyle: config.forcePathStyle } : {}),
      ...(config.accessKeyId ? { accessKeyId: config.accessKeyId } : {}),
      ...(config.secretAccessKey ? { secretAccessKey: config.secretAccessKey } : {}),
      timeoutMs: config.timeoutMs,
    });
  }
  return new FsDocumentStore(config.dir);
}

/**
 * The HMAC key of document links: the configured one, else one generated once
 * and kept in Redis (SET NX), so every process signs and checks with the same
 * key without anyone having to configure it.
 */
export async function documentLinkSecret(redis: RedisClient, keys: KeyBuilder, configured: string | undefined): Promise<string> {
  if (configured) return configured;
  const key = keys.documentLinkSecret();
  await redis.set(key, randomBytes(32).toString('base64url'), 'NX');
  const secret = await redis.get(key);
  if (!secret) throw new Error('document link secret missing from Redis');
  return secret;
}
