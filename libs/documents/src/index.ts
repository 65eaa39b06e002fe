export * from './document-store';
export * from './fs-store';
export * from './s3-store';
export * from './pdf';
export * from './links';
