export * from './accept';
export * from './app';
export * from './context';
export * from './errors';
export * from './server';
export * from './signature';
