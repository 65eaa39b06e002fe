export * from './render';
export * from './worker';
