export * from './provider';
export * from './classify';
export * from './deadline';
export * from './http-exchange';
export * from './http-provider';
export * from './smtp-provider';
export * from './log-provider';
export * from './create-provider';
