import { createHash } from 'node:crypto';
import { codeOf, retryDelayMs, type AnyErrorCode, type RenderJobData } from '@singleshot/core';
import type { DocumentsConfig } from '@singleshot/config';
import { documentStoreKey, renderPdf, type DocumentStore } from '@singleshot/documents';
import type { DocumentStateStore } from '@singleshot/store';
import type { DocumentMetrics, Logger } from '@singleshot/observability';
import type { RouteTemplates } from '@singleshot/runtime';
import { TemplateError } from '@singleshot/templates';

/** What the render handler needs; tests pass small object literals or wrap the store. */
export interface RenderDeps {
  documents: Pick<DocumentStateStore, 'claim' | 'commit' | 'extend'>;
  store: DocumentStore;
  templates: Pick<RouteTemplates, 'document'>;
  policy: Pick<DocumentsConfig, 'attempts' | 'backoffMs' | 'backoffCapMs' | 'leaseMs'>;
  /** Wakes the deliveries waiting for this document (promotes their delayed jobs). */
  wake(operationKeys: string[]): Promise<void>;
  workerId: string;
  logger: Logger;
  metrics: Pick<DocumentMetrics, 'renders' | 'renderDuration'>;
  now?: () => number;
  random?: () => number;
}

export type RenderOutcome =
  | { kind: 'stored'; checksum: string; size: number; storeKey: string; duplicate: boolean }
  | { kind: 'dead'; code: string }
  | { kind: 'retry'; delayMs: number; reason: string }
  | { kind: 'stale' };

const CONTENT_TYPE = 'application/pdf';

/**
 * One render attempt of one document: claim (the document's own lock and
 * fence), generate deterministically, store under the deterministic key,
 * fenced commit with the checksum (journaled). A failed attempt retries on
 * the document's own schedule; after its last attempt the document is dead
 * and its waiting deliveries end `dead` with `document_failed`.
 */
export async function renderDocument(job: RenderJobData, deps: RenderDeps): Promise<RenderOutcome> {
  const now = deps.now ?? Date.now;
  const random = deps.random ?? Math.random;
  const { leaseMs } = deps.policy;
  const claim = await deps.documents.claim({ documentKey: job.documentKey, messageKey: job.messageKey, owner: deps.workerId, leaseMs, job });
  const log = deps.logger.child({ documentKey: job.documentKey, messageKey: job.messageKey, document: job.name });
  switch (claim.kind) {
    case 'stored':
      deps.metrics.renders.inc({ format: job.format, result: 'duplicate' });
      await deps.wake(job.dependents);
      return { kind: 'stored', checksum: claim.checksum, size: claim.size, storeKey: claim.storeKey, duplicate: true };
    case 'dead':
      await deps.wake(job.dependents);
      return { kind: 'dead', code: claim.error.code };
    case 'conflict':
      return { kind: 'retry', delayMs: claim.retryInMs + Math.floor(random() * 250), reason: 'conflict' };
    case 'claimed':
      break;
  }
  const { fence, attempts } = claim;
  const extender = setInterval(() => {
    deps.documents.extend(job.documentKey, fence, leaseMs).catch(() => undefined);
  }, Math.max(250, Math.floor(leaseMs / 3)));
  const started = now();
  try {
    const templates = deps.templates.document(job.route, job.name);
    if (!templates) {
      return await fail(job, deps, fence, attempts, { code: 'TEMPLATE_MISSING', message: `route "${job.route}" has no document "${job.name}" (config changed?)` }, true);
    }
    const context = { ...job.context, document: { name: job.name, version: job.version } };
    const fileName = templates.fileName(context).trim() || `${job.name}.pdf`;
    const bytes = await renderPdf(templates.body(context), { title: templates.title(context), createdAt: new Date(job.createdAt) });
    const checksum = createHash('sha256').update(bytes).digest('hex');
    const storeKey = documentStoreKey(job.documentKey, fileName);
    await deps.store.put(storeKey, bytes, CONTENT_TYPE);
    const committed = await deps.documents.commit({
      documentKey: job.documentKey,
      fence,
      name: job.name,
      messageKey: job.messageKey,
      outcome: 'stored',
      checksum,
      size: bytes.length,
      storeKey,
      fileName,
      contentType: CONTENT_TYPE,
    });
    if (committed.kind === 'stale') {
      log.warn({ event: 'fence_superseded', fence }, 'render commit rejected: a later claim owns the document');
      return { kind: 'stale' };
    }
    deps.metrics.renders.inc({ format: job.format, result: 'stored' });
    deps.metrics.renderDuration.observe({ format: job.format }, (now() - started) / 1000);
    log.info({ event: 'document_stored', checksum, size: bytes.length, storeKey, attempt: attempts }, 'document stored');
    await deps.wake(job.dependents);
    return { kind: 'stored', checksum, size: bytes.length, storeKey, duplicate: false };
  } catch (err) {
    // A template that throws will throw on every attempt: permanent. Anything
    // else (the store, the disk) may pass next time.
    const permanent = err instanceof TemplateError;
    const error = { code: codeOf(err) ?? 'RENDER_FAILED', message: (err as Error).message ?? String(err) };
    return fail(job, deps, fence, attempts, error, permanent);
  } finally {
    clearInterval(extender);
  }
}

async function fail(
  job: RenderJobData,
  deps: RenderDeps,
  fence: string,
  attempts: number,
  error: { code: AnyErrorCode; message: string },
  permanent: boolean,
): Promise<RenderOutcome> {
  const now = (deps.now ?? Date.now)();
  const log = deps.logger.child({ documentKey: job.documentKey, messageKey: job.messageKey, document: job.name });
  if (permanent || attempts >= deps.policy.attempts) {
    const committed = await deps.documents.commit({ documentKey: job.documentKey, fence, name: job.name, messageKey: job.messageKey, outcome: 'dead', error });
    if (committed.kind === 'stale') return { kind: 'stale' };
    deps.metrics.renders.inc({ format: job.format, result: 'dead' });
    log.error({ event: 'document_failed', error, attempt: attempts, dependents: job.dependents.length }, 'document failed for good; its deliveries end dead (document_failed)');
    await deps.wake(job.dependents);
    return { kind: 'dead', code: error.code };
  }
  const delayMs = retryDelayMs({
    attempt: attempts,
    scheduleMs: deps.policy.backoffMs,
    capMs: deps.policy.backoffCapMs,
    ...(deps.random ? { random: deps.random } : {}),
  });
  const committed = await deps.documents.commit({ documentKey: job.documentKey, fence, name: job.name, messageKey: job.messageKey, outcome: 'failed', error, nextAttemptAt: now + delayMs });
  if (committed.kind === 'stale') return { kind: 'stale' };
  deps.metrics.renders.inc({ format: job.format, result: 'retry' });
  log.warn({ event: 'document_retry', error, attempt: attempts, delayMs }, 'document generation failed; retrying on its own schedule');
  return { kind: 'retry', delayMs, reason: error.code };
}
