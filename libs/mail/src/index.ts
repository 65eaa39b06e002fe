export * from './bounded-text';
export * from './raw-headers';
export * from './encoded-words';
export * from './addresses';
export * from './html-text';
export * from './mail-input';
export * from './mime-body';
export * from './parse-raw-mail';
