export * from './types';
export * from './reconnect-backoff';
export * from './poll-folder';
export * from './imap-source';
export * from './imap-source-group';
export * from './parse-imap-mail';
