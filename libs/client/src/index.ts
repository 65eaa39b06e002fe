export * from './errors';
export { parseRetryAfter, retryDelayMs, type BackoffOptions } from './backoff';
export * from './client';
export * from './verify-delivery';
