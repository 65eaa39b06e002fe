export * from './keys';
export * from './connection';
export * from './scripts';
export * from './redis-check';
export * from './operation-store';
export * from './message-store';
export * from './journal';
