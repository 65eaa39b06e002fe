export * from './free-port';
export * from './redis-server';
export * from './http-sink';
export * from './smtp-sink';
export * from './fleet';
export * from './fault-proxy';
export * from './dovecot';
export * from './mail-webhook-fixtures';
