import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { assertStoreKey, DocumentStoreError, type DocumentStore } from './document-store';

export interface S3StoreOptions {
  bucket: string;
  /** Key prefix inside the bucket (e.g. `singleshot/`). */
  prefix?: string;
  region?: string;
  /** S3-compatible endpoint (MinIO, Ceph, s3rver); none = AWS. */
  endpoint?: string;
  /** Path-style URLs (`endpoint/bucket/key`), which most S3-compatible servers need. */
  forcePathStyle?: boolean;
  /** Static credentials; none = the AWS SDK's default chain (environment, instance role). */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Per request deadline. */
  timeoutMs?: number;
}

function statusOf(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

type S3Sdk = typeof import('@aws-sdk/client-s3');

// The S3 SDK (megabytes of heap) loads when the first S3 store is made, so a
// process with the Redis document store, or with none, never pays it.
let s3Sdk: Promise<S3Sdk> | undefined;
const loadS3Sdk = () => (s3Sdk ??= import('@aws-sdk/client-s3'));

/** Documents in an S3-compatible bucket through @aws-sdk/client-s3. */
export class S3DocumentStore implements DocumentStore {
  private readonly connection: Promise<{ sdk: S3Sdk; client: S3Client }>;
  private readonly prefix: string;

  constructor(private readonly options: S3StoreOptions) {
    this.prefix = options.prefix ?? '';
    this.connection = loadS3Sdk().then((sdk) => ({ sdk, client: new sdk.S3Client(this.clientConfig()) }));
    // A failed load is reported by the first call that needs the client.
    this.connection.catch(() => undefined);
  }

  private clientConfig(): S3ClientConfig {
    const options = this.options;
    return {
      region: options.region ?? 'us-east-1',
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      forcePathStyle: options.forcePathStyle ?? Boolean(options.endpoint),
      ...(options.accessKeyId && options.secretAccessKey
        ? { credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } }
        : {}),
      // Retries belong to the render operation (its own attempts and backoff), not hidden in the SDK.
      maxAttempts: 1,
      requestHandler: { requestTimeout: options.timeoutMs ?? 30_000, connectionTimeout: Math.min(options.timeoutMs ?? 30_000, 5_000) },
    };
  }

  get describe(): string {
    return `s3:${this.options.bucket}/${this.prefix}`;
  }

  private key(key: string): string {
    assertStoreKey(key);
    return `${this.prefix}${key}`;
  }

  private fail(op: string, key: string, err: unknown): never {
    const status = statusOf(err);
    throw new DocumentStoreError(`S3 ${op} ${key} failed: ${status ? `HTTP ${status}` : ((err as Error).name ?? 'error')}`, { cause: err });
  }

  async put(key: string, bytes: Buffer, contentType: string): Promise<void> {
    try {
      const { sdk, client } = await this.connection;
      await client.send(new sdk.PutObjectCommand({ Bucket: this.options.bucket, Key: this.key(key), Body: bytes, ContentType: contentType }));
    } catch (err) {
      this.fail('put', key, err);
    }
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      const { sdk, client } = await this.connection;
      const out = await client.send(new sdk.GetObjectCommand({ Bucket: this.options.bucket, Key: this.key(key) }));
      if (!out.Body) return null;
      return Buffer.from(await out.Body.transformToByteArray());
    } catch (err) {
      if (statusOf(err) === 404 || (err as Error).name === 'NoSuchKey') return null;
      this.fail('get', key, err);
    }
  }

  async exists(key: string): Promise<boolean> {
    try {
      const { sdk, client } = await this.connection;
      await client.send(new sdk.HeadObjectCommand({ Bucket: this.options.bucket, Key: this.key(key) }));
      return true;
    } catch (err) {
      if (statusOf(err) === 404 || (err as Error).name === 'NotFound') return false;
      this.fail('head', key, err);
    }
  }

  async delete(key: string): Promise<void> {
    try {
      const { sdk, client } = await this.connection;
      await client.send(new sdk.DeleteObjectCommand({ Bucket: this.options.bucket, Key: this.key(key) }));
    } catch (err) {
      if (statusOf(err) === 404) return;
      this.fail('delete', key, err);
    }
  }

  async close(): Promise<void> {
    const connected = await this.connection.catch(() => undefined);
    connected?.client.destroy();
  }
}
