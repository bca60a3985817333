/**
 * The layers of the service, enforced by `npm run check:layers` (run by .ci/run).
 *
 *   src/main.ts, workers/main.ts, src/bin/*      composition roots: wire services, start processes
 *   src/modules/<feature>/{routes,schemas,…}.ts  HTTP and CLI adapters of a feature
 *   src/http/                                    the HTTP edge shared by every feature
 *   src/modules/<feature>/*.ts (the rest)        domain: one function per use case, dependencies passed in
 *   src/db/, src/lib/, src/errors.ts             data model and plain helpers
 *   workers/                                     BullMQ workers and timers, reaching the domain via module entries
 */

/** Files of a feature folder that adapt it to HTTP or to the command line; everything else there is domain. */
const ADAPTERS = '(routes|[a-z-]+-routes|schemas|presenters|middleware|guard|dashboard|limiters|messages|cli)\\.ts$';
const DOMAIN = ['^src/modules/', '^src/db/', '^src/lib/', '^src/errors\\.ts$'];

module.exports = {
  forbidden: [
    {
      name: 'domain-without-http',
      comment: 'Domain code is plain functions: it imports neither hono nor the HTTP edge, so it runs the same from a route, a worker or the CLI.',
      severity: 'error',
      from: { path: DOMAIN, pathNot: `^src/modules/[^/]+/${ADAPTERS}` },
      to: { path: ['^src/http/', '^node_modules/hono/', '^node_modules/@hono/'] },
    },
    {
      name: 'domain-without-adapters',
      comment: 'Domain code does not reach into a feature\'s routes, request schemas or presenters; those depend on it, not the other way round.',
      severity: 'error',
      from: { path: DOMAIN, pathNot: `^src/modules/[^/]+/${ADAPTERS}` },
      to: { path: `^src/modules/[^/]+/${ADAPTERS}` },
    },
    {
      name: 'db-without-features',
      comment: 'The data model and database plumbing know no feature.',
      severity: 'error',
      from: { path: '^src/db/' },
      to: { path: '^src/modules/' },
    },
    {
      name: 'lib-stands-alone',
      comment: 'src/lib holds helpers with no knowledge of the service: no database, no feature, no HTTP.',
      severity: 'error',
      from: { path: '^src/lib/' },
      to: { path: ['^src/(db|modules|http|queues)/', '^src/(env|services|errors)\\.ts$'] },
    },
    {
      name: 'nothing-imports-workers',
      comment: 'Workers are started, never called: only the process entry points import them.',
      severity: 'error',
      from: { pathNot: ['^workers/', '^src/main\\.ts$'] },
      to: { path: '^workers/' },
    },
    {
      name: 'workers-through-module-entries',
      comment: 'Workers reach a feature only through its public entry (src/modules/<feature>/index.ts), never its internals.',
      severity: 'error',
      from: { path: '^workers/' },
      to: { path: '^src/modules/', pathNot: '^src/modules/[^/]+/index\\.ts$' },
    },
    {
      name: 'workers-without-http',
      comment: 'Workers do not depend on the HTTP layer.',
      severity: 'error',
      from: { path: '^workers/' },
      to: { path: ['^src/http/', '^src/app\\.ts$', '^node_modules/hono/', '^node_modules/@hono/'] },
    },
    {
      name: 'no-circular',
      comment: 'Import cycles hide the order in which modules initialise and blur which layer owns what.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'Every import resolves to a file or an installed package.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'not-to-dev-dependency',
      comment: 'Code that ships does not import development dependencies.',
      severity: 'error',
      from: { path: ['^src/', '^workers/'], pathNot: '^src/bin/openapi\\.ts$' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
