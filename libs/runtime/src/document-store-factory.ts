import type { DocumentsConfig } from '@singleshot/config';
import { FsDocumentStore, S3DocumentStore, type DocumentStore } from '@singleshot/documents';

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
