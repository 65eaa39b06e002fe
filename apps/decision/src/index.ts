export * from './decide';
export * from './route-match';
export * from './worker';
