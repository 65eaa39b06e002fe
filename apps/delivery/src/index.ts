export * from './deliver';
export * from './lease-keeper';
export * from './reconcile';
export * from './worker';
export * from './sweeper';
export * from './limits';
export * from './send-chain';
export * from './attempt';
