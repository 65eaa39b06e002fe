export * from './send-error';
export * from './safe-equal';
export * from './json-depth';
export * from './token-bucket';
export * from './server-limits';
export * from './in-flight';
export * from './loopback';
