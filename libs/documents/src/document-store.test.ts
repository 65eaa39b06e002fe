import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestS3, type TestS3 } from '@singleshot/test-harness';
import { DocumentStoreError, documentStoreKey, type DocumentStore } from './document-store';
import { FsDocumentStore } from './fs-store';
import { S3DocumentStore } from './s3-store';
import { renderPdf } from './pdf';

const docKey = createHash('sha256').update('doc').digest('hex');
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** The same contract for every adapter: the filesystem and S3 (against a real s3rver). */
function storeContract(name: string, open: () => Promise<{ store: DocumentStore; close(): Promise<void> }>): void {
  describe(`${name} document store`, () => {
    let store: DocumentStore;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ store, close } = await open());
    });
    afterAll(async () => {
      await store?.close();
      await close?.();
    });

    it('stores, reads back byte for byte, reports existence and deletes', async () => {
      const key = documentStoreKey(docKey, 'Purchase Order PO-1.pdf');
      expect(key).toBe(`${docKey}/purchase-order-po-1.pdf`);
      const bytes = await renderPdf('# PO-1\n| item | qty |\n|---|---|\n| bolts | 3 |', { title: 'PO-1', createdAt: new Date('2026-01-02T03:04:05Z') });
      expect(await store.exists(key)).toBe(false);
      expect(await store.get(key)).toBeNull();
      await store.put(key, bytes, 'application/pdf');
      expect(await store.exists(key)).toBe(true);
      expect(sha((await store.get(key)) as Buffer)).toBe(sha(bytes));
      await store.delete(key);
      expect(await store.exists(key)).toBe(false);
      await store.delete(key); // absent: no error
    });

    it('a second put under the same key (a retry after a crash) leaves one document with those bytes', async () => {
      const key = documentStoreKey(docKey, 'again.pdf');
      const meta = { title: 'x', createdAt: new Date('2026-05-06T07:08:09Z') };
      const first = await renderPdf('# same\nline', meta);
      const second = await renderPdf('# same\nline', meta);
      expect(sha(second)).toBe(sha(first));
      await Promise.all([store.put(key, first, 'application/pdf'), store.put(key, second, 'application/pdf')]);
      expect(sha((await store.get(key)) as Buffer)).toBe(sha(first));
    });

    it('refuses keys that could escape the store', async () => {
      await expect(store.put('../etc/passwd', Buffer.from('x'), 'text/plain')).rejects.toBeInstanceOf(DocumentStoreError);
      await expect(store.get('/abs')).rejects.toMatchObject({ code: 'DOCUMENT_STORE' });
    });
  });
}

storeContract('filesystem', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ss-docs-'));
  return {
    store: new FsDocumentStore(dir),
    close: async () => {
      // No temporary file is left behind by completed writes.
      const leftovers = readdirSync(join(dir, docKey)).filter((f) => f.endsWith('.tmp'));
      expect(leftovers).toEqual([]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

let s3: TestS3 | undefined;
storeContract('S3 (s3rver)', async () => {
  s3 = await startTestS3();
  return {
    store: new S3DocumentStore({ bucket: s3.bucket, prefix: 'ss/', endpoint: s3.endpoint, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey }),
    close: async () => s3?.close(),
  };
});

describe('S3 store failures', () => {
  it('a server that is down is a DocumentStoreError (the render retries it), not a hang', async () => {
    const store = new S3DocumentStore({ bucket: 'b', endpoint: 'http://127.0.0.1:1', accessKeyId: 'a', secretAccessKey: 'b', timeoutMs: 2000 });
    await expect(store.put(documentStoreKey(docKey, 'x.pdf'), Buffer.from('x'), 'application/pdf')).rejects.toMatchObject({ code: 'DOCUMENT_STORE' });
    await store.close();
  });
});
