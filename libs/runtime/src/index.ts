export * from './runtime';
export * from './shutdown';
export * from './app-main';
export * from './partition-workers';
export * from './route-templates';
export * from './document-store-factory';
