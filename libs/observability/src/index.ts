export * from './logger';
export * from './log-format';
export * from './metrics';
export type { SourceOptions } from './cached-source';
export * from './http-handlers';
export * from './health-server';
export * from './document-metrics';
export * from './openapi-common';
export * from './digest-metrics';
