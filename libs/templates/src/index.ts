export * from './engine';
export * from './helpers';
export * from './mjml';
