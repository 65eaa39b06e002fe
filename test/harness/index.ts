export * from './free-port';
export * from './redis-server';
