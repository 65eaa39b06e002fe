export * from './deliver';
export * from './lease-keeper';
export * from './reconcile';
export * from './worker';
