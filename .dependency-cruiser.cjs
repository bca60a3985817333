/**
 * The layers of the service, enforced by `npm run check:layers` (run by .ci/run). Imports point down this list:
 *
 *   src/main.ts, workers/main.ts, src/bin/            entry points: start a process or a command
 *   src/app.ts, src/commands.ts                       the HTTP app (every feature's routes mounted) and the operator
 *                                                     commands (every feature's CLI)
 *   workers/                                          BullMQ workers and timers, reaching features through their index.ts
 *   src/startup/, src/seed/                           what a process does at start: config, migrations, gauges, demo data
 *   src/modules/<feature>/                            features: routes, schemas, presenters and CLI over domain functions
 *   src/cli/                                          the CLI library: command shapes, options checked by the API's schemas
 *   src/http/, src/demo/                              the HTTP edge; the demo data (which the seed writes and the
 *                                                     OpenAPI examples show)
 *   src/runtime/, src/queues/                         what one process holds: connections, caches, metrics, queues
 *   src/modules/{order-state,accounts,inventory,      the lower domain every feature shares: the order state machines,
 *     campaigns,prices,suppliers}/                    accounts, stock, campaign pricing, account prices, the supplier adapters
 *   src/db/                                           the data model, the outbox, database plumbing
 *   src/core/, src/lib/                               configuration, the error catalogue, the caller; plain helpers
 *
 *   clients/typescript/                               the TypeScript client, a package of its own: beside the layers,
 *                                                     importing none of them
 */

/** Files of a feature folder that adapt it to HTTP or to the command line; everything else there is domain. */
const ADAPTERS = '(routes|[a-z-]+-routes|schemas|examples|presenters|middleware|dashboard|limiters|messages|cli)\\.ts$';
const DOMAIN = ['^src/modules/', '^src/db/', '^src/lib/', '^src/core/'];
/** The domain every feature builds on; it knows no feature. */
const LOWER_DOMAIN = '^src/modules/(order-state|accounts|inventory|campaigns|prices|suppliers)/';

module.exports = {
  forbidden: [
    {
      name: 'no-folder-cycle',
      comment:
        'Two folders that import each other are one tangle: neither can be read, tested or moved alone. Each folder depends one way (the list at the top of this file).',
      severity: 'error',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
    {
      name: 'lower-domain-knows-no-feature',
      comment:
        'The order state machines, accounts, inventory, campaigns, account prices and the supplier adapters are used by many features: they import only core/, db/, lib/ and each other, so no feature is tied to another through them.',
      severity: 'error',
      from: { path: LOWER_DOMAIN },
      to: { path: '^src/', pathNot: [LOWER_DOMAIN, '^src/(core|db|lib)/'] },
    },
    {
      name: 'core-stands-on-lib',
      comment: 'Configuration, the error catalogue and the caller are what every layer may import; they import nothing of the service but lib/.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: '^src/', pathNot: '^src/(core|lib)/' },
    },
    {
      name: 'http-knows-no-module',
      comment: 'src/http/ is the edge every feature mounts on (guards, shared fields, the contract); a feature it imported could not mount on it.',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: ['^src/modules/', '^src/(bin|seed|startup|demo)/', '^src/main\\.ts$', '^src/(app|commands)\\.ts$'] },
    },
    {
      name: 'modules-import-no-entry-point',
      comment: 'Entry points, start-up, seeding and workers use the features; a feature importing them would run their side effects or tie itself to one process.',
      severity: 'error',
      from: { path: '^src/modules/' },
      to: { path: ['^src/(bin|seed|startup)/', '^workers/', '^src/main\\.ts$', '^src/(app|commands)\\.ts$'] },
    },
    {
      name: 'runtime-knows-no-feature',
      comment:
        'The process runtime, the queues, the demo data and the CLI library are below every feature and know none (gauges that read features are wired by src/startup).',
      severity: 'error',
      from: { path: ['^src/runtime/', '^src/queues/', '^src/demo/', '^src/cli/'] },
      to: { path: ['^src/modules/', '^src/(bin|seed|startup)/', '^workers/'] },
    },
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
      to: { path: ['^src/(db|modules|http|queues|core|runtime|startup)/'] },
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
      name: 'client-knows-the-store-by-its-document',
      comment:
        "The TypeScript client is a package resellers install on its own: it knows the store only through the OpenAPI document's generated types, never the service's code, and the service never depends on it.",
      severity: 'error',
      from: { path: '^clients/' },
      to: { path: ['^src/', '^workers/', '^test/'] },
    },
    {
      name: 'service-without-client',
      comment: 'The service does not use its own client (its tests do).',
      severity: 'error',
      from: { path: ['^src/', '^workers/'] },
      to: { path: '^clients/' },
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
      conditionNames: ['source', 'import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
