export * from './free-port';
export * from './redis-server';
export * from './http-sink';
export * from './smtp-sink';
export * from './fleet';
