export * from './accept';
export * from './deadlines';
export * from './errors';
export * from './acceptance-keys';
export * from './cancellation';
export * from './operator-suppression';
