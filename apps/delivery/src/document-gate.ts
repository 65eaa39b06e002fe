import type { DeliverJobData, DocumentRef, ErrorCode } from '@singleshot/core';
import type { Attachment, DocumentLink, Provider } from '@singleshot/providers';
import type { StoredDocument } from '@singleshot/store';
import type { DocumentDeps, ErrorInfo } from './deliver-types';

/**
 * What an operation's documents allow (see docs/architecture.md, "Documents"):
 * - `ready`: every document is stored, send with them;
 * - `waiting`: one is still being generated (or retried): wait visibly, no attempt used;
 * - `failed`: one failed for good: the operation ends `dead` with `document_failed`.
 */
export type DocumentGate =
  | { kind: 'ready'; documents: { ref: DocumentRef; stored: StoredDocument }[] }
  | { kind: 'waiting'; waitingFor: string; documentKey: string; status: string }
  | { kind: 'failed'; error: ErrorInfo };

/**
 * Reads the state of every document the operation needs (one round trip). A
 * waiting mark left from an earlier look is cleared by the claim that follows.
 */
export async function checkDocuments(job: DeliverJobData & { documents: DocumentRef[] }, deps: DocumentDeps): Promise<DocumentGate> {
  const documents = await deps.state.statuses(job.documents.map((d) => d.documentKey));
  const ready: { ref: DocumentRef; stored: StoredDocument }[] = [];
  for (const [i, doc] of documents.entries()) {
    const ref = job.documents[i] as DocumentRef;
    if (doc.status === 'dead') {
      return {
        kind: 'failed',
        error: { code: 'DOCUMENT_FAILED' satisfies ErrorCode, message: `document "${ref.name}" could not be generated: ${doc.error?.code ?? 'error'}: ${doc.error?.message ?? ''}`.slice(0, 2000) },
      };
    }
    if (doc.status !== 'stored' || !doc.stored) return { kind: 'waiting', waitingFor: `document:${ref.name}`, documentKey: ref.documentKey, status: doc.status };
    ready.push({ ref, stored: doc.stored });
  }
  return { kind: 'ready', documents: ready };
}

/** What the provider call carries: links for every document, bytes for those an email can attach. */
export interface PreparedDocuments {
  attachments: Attachment[];
  documents: DocumentLink[];
}

/**
 * Loads what a send needs. Bytes are read only when the channel has an SMTP
 * provider and the document is within `maxAttachmentBytes`; past the limit the
 * email carries a time-limited link instead. A document that the state calls
 * stored but the store cannot return is a retryable store failure (thrown).
 */
export async function prepareDocuments(gate: Extract<DocumentGate, { kind: 'ready' }>, chain: Provider[], deps: DocumentDeps): Promise<PreparedDocuments> {
  const attaches = chain.some((p) => p.type === 'smtp');
  const attachments: Attachment[] = [];
  const documents: DocumentLink[] = [];
  for (const { ref, stored } of gate.documents) {
    const attach = attaches && stored.size <= deps.maxAttachmentBytes;
    if (attach) {
      const bytes = await deps.store.get(stored.storeKey);
      if (!bytes) throw Object.assign(new Error(`document ${stored.storeKey} is missing from the store`), { code: 'DOCUMENT_MISSING' satisfies ErrorCode });
      attachments.push({ fileName: stored.fileName, contentType: stored.contentType, content: bytes });
    }
    const link = await deps.link(stored.storeKey);
    documents.push({ name: ref.name, fileName: stored.fileName, contentType: stored.contentType, size: stored.size, checksum: stored.checksum, url: link.url, expiresAt: link.expiresAt, attached: attach });
  }
  return { attachments, documents };
}
