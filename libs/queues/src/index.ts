export * from './names';
export * from './schemas';
export * from './queues';
export * from './replay';
export * from './replay-list';
export * from './replay-requeue';
export * from './replay-documents';
export * from './dead-record';
