export * from './names';
export * from './schemas';
export * from './queues';
