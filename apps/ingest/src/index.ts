export * from '@singleshot/intake';
export * from './route-table';
export type { IngestRoute, RouteRequest, RouteDoc } from './http/route';
export * from './context';
export * from './server';
export * from './signature';
export * from './mail-intake';
export * from './mailbox-pollers';
export * from './producer-auth';
