export * from './relay';
export * from './derive';
export * from './hand-off';
export * from './metrics';
export * from './source';
