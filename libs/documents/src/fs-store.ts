import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { assertStoreKey, DocumentStoreError, type DocumentStore } from './document-store';

/**
 * Documents as files under one directory (the embedded default,
 * `.singleshot/documents`). A write goes to a temporary file first and is
 * renamed into place, so a reader never sees half a document, and a writer
 * killed mid-write leaves only a temporary file behind.
 */
export class FsDocumentStore implements DocumentStore {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = resolve(dir);
  }

  get describe(): string {
    return `fs:${this.dir}`;
  }

  private path(key: string): string {
    assertStoreKey(key);
    return join(this.dir, ...key.split('/'));
  }

  async put(key: string, bytes: Buffer, _contentType?: string): Promise<void> {
    const target = this.path(key);
    // The temporary name only has to be unique among concurrent writers; it never becomes part of the document.
    const tmp = `${target}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      await mkdir(dirname(target), { recursive: true });
      await writeFile(tmp, bytes);
      await rename(tmp, target);
    } catch (err) {
      await rm(tmp, { force: true }).catch(() => undefined);
      throw new DocumentStoreError(`cannot write document ${key}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
    }
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      return await readFile(this.path(key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw new DocumentStoreError(`cannot read document ${key}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
    }
  }

  async exists(key: string): Promise<boolean> {
    try {
      return (await stat(this.path(key))).isFile();
    } catch {
      return false;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  async close(): Promise<void> {}
}
