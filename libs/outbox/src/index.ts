export * from './ddl';
export { enqueue, checkOutboxEvent, type EnqueueOptions, type OutboxEvent, type Queryable } from './enqueue';
