export * from './provider-sink';
export * from './fleet-config';
export * from './fleet-processes';
export * from './proc-stats';
export * from './ports';
