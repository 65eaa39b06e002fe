// Test data builders that depend on @singleshot/core alone, so the tests of
// apps, libs and the suites under test/ can all use them (`@singleshot/test-jobs`)
// without closing a dependency cycle (test/support/runtime.ts imports the libs).
export * from './deliver-job';
