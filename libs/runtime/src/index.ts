export * from './runtime';
export * from './shutdown';
export * from './app-main';
export * from './partition-workers';
export * from './refusal-aware-worker';
export * from './in-flight-jobs';
export * from './route-templates';
export * from './document-store-factory';
