import { classifyError } from '@singleshot/core';
import type { Provider } from '@singleshot/providers';
import { withSpan } from '@singleshot/tracing';
import type { DeliverDeps } from './deliver-types';

/**
 * The operation store with the claim and the fenced commit in spans of their
 * own (`claim`: its result and fence; `commit`: the status written, the fence,
 * ok or stale). Built only when tracing is on, so with tracing off delivery
 * calls the store directly and pays nothing.
 */
export function tracedOperations(ops: DeliverDeps['operations']): DeliverDeps['operations'] {
  return {
    claim: (input) =>
      withSpan('claim', { attributes: { 'singleshot.operation_key': input.operationKey } }, async (span) => {
        const result = await ops.claim(input);
        span?.setAttributes({
          'singleshot.claim': result.kind,
          'singleshot.fence': result.kind === 'go' ? result.fence : undefined,
          'singleshot.previous_status': result.kind === 'go' ? result.previousStatus : undefined,
          'singleshot.attempt': result.kind === 'go' ? result.attempts : undefined,
        });
        return result;
      }),
    commit: (input) =>
      withSpan('commit', { attributes: { 'singleshot.operation_key': input.operationKey, 'singleshot.status': input.outcome, 'singleshot.fence': input.fence } }, async (span) => {
        const result = await ops.commit(input);
        span?.setAttributes({ 'singleshot.commit': result.kind, 'singleshot.current_fence': result.kind === 'stale' ? result.currentFence : undefined });
        return result;
      }),
    extend: (...args) => ops.extend(...args),
    history: (...args) => ops.history(...args),
    get: (...args) => ops.get(...args),
  };
}

/**
 * A provider whose calls run in `provider.send` / `provider.lookup` spans
 * (a client span: the provider's name and type, the outcome, whether it left
 * the operation in doubt). An HTTP provider puts the active span's
 * `traceparent` on its request, so a provider that traces joins the trace.
 */
export function tracedProvider(provider: Provider): Provider {
  const attributes = { 'singleshot.provider': provider.name, 'singleshot.provider_type': provider.type };
  const traced: Provider = {
    name: provider.name,
    type: provider.type,
    send: (req, ctx) =>
      withSpan('provider.send', { kind: 'client', attributes: { ...attributes, 'singleshot.operation_key': req.operationKey } }, async (span) => {
        try {
          const result = await provider.send(req, ctx);
          span?.setAttributes({ 'singleshot.outcome': 'sent', 'singleshot.external_id': result.externalId, 'singleshot.in_doubt': false });
          return result;
        } catch (err) {
          const kind = classifyError(err);
          span?.setAttributes({ 'singleshot.outcome': kind, 'singleshot.in_doubt': kind === 'in_doubt' });
          throw err;
        }
      }),
    close: () => provider.close(),
  };
  const lookup = provider.lookup?.bind(provider);
  if (lookup) {
    traced.lookup = (operationKey, ctx, target) =>
      withSpan('provider.lookup', { kind: 'client', attributes: { ...attributes, 'singleshot.operation_key': operationKey } }, async (span) => {
        const found = await lookup(operationKey, ctx, target);
        span?.setAttributes({ 'singleshot.found': found.found });
        return found;
      });
  }
  return traced;
}
