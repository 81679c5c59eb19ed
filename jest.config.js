/**
 * Jest runs TypeScript through SWC (no type-checking here: `npm run typecheck` does that).
 * Two projects: `unit` needs nothing running; `integration` (the service from outside) shares one local stack per run
 * (MongoDB-wire server, Temporal dev server, the service) started by test/support/global-setup.ts.
 */
const transform = {
  '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }],
  '^.+\\.m?js$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'ecmascript' } }, module: { type: 'commonjs' } }],
};
// ESM-only packages that tests reach in-process; Node 20's require(esm) is not available inside Jest.
const transformIgnorePatterns = ['/node_modules/(?!(jose|aedes|aedes-[^/]+|@seriousme)/)'];
module.exports = {
  testTimeout: 60000,
  // No watchman: a fresh CI machine has none, and probing for it stalled runs here.
  watchman: false,
  // Jest's summary, then one plain closing line (test/support/summary-reporter.js).
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  projects: [
    { displayName: 'unit', testEnvironment: 'node', roots: ['<rootDir>/test/unit'], testMatch: ['**/*.test.ts'], transform, transformIgnorePatterns },
    {
      displayName: 'integration',
      testEnvironment: 'node',
      roots: ['<rootDir>/test/integration'],
      testMatch: ['**/*.test.ts'],
      transform,
      transformIgnorePatterns,
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
