export * from './accept';
export * from './app';
export * from './context';
export * from './errors';
export * from './server';
export * from './signature';
export * from './mail-intake';
export * from './mailbox-pollers';
