/**
 * Where generated documents live. Keys are deterministic (see documentStoreKey),
 * so a retry after a crash writes the same key again, and with deterministic
 * generation the same bytes: `put` may safely overwrite.
 */
export interface DocumentStore {
  /** Stores the bytes under the key (overwriting: the same key always holds the same bytes). */
  put(key: string, bytes: Buffer, contentType: string): Promise<void>;
  /** The bytes, or null when nothing is stored under the key. */
  get(key: string): Promise<Buffer | null>;
  /** True when something is stored under the key. */
  exists(key: string): Promise<boolean>;
  /** Removes the key; no error when it is absent. */
  delete(key: string): Promise<void>;
  /** What this store is, for logs and `ops show` (no secrets). */
  readonly describe: string;
  close(): Promise<void>;
}

/** A document store failure; `code` is stable (`DOCUMENT_STORE`). */
export class DocumentStoreError extends Error {
  readonly code = 'DOCUMENT_STORE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DocumentStoreError';
  }
}

const KEY = /^[a-z0-9][a-z0-9/_.-]{0,255}$/;

/**
 * The store key of a document: `<documentKey>/<file name>`. The document key is
 * a hash of stable ids only; the file name is made safe for paths and S3.
 */
export function documentStoreKey(documentKey: string, fileName: string): string {
  const safe = fileName.toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[-.]+/, '').slice(0, 120) || 'document.pdf';
  return `${documentKey}/${safe}`;
}

/** Rejects keys that could escape a directory or an S3 prefix. */
export function assertStoreKey(key: string): void {
  if (!KEY.test(key) || key.includes('..')) throw new DocumentStoreError(`invalid document store key "${key}"`);
}
