export * from './story-types';
export * from './story';
export * from './story-reader';
export * from './story-text';
