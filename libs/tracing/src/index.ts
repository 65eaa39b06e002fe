export * from './traceparent';
export type { SpanAttributes, SpanOptions, SpanRef, TracingImpl } from './tracing-api';
export { tracingOn, tracingImpl, installTracing } from './tracing-state';
export * from './spans';
export * from './tracing-settings';
export * from './start-tracing';
export * from './job-spans';
