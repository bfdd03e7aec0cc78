// The server's layers (docs/ARCHITECTURE.md), checked by dependency-cruiser in the lint step on every source file but
// the tests (a test may build a whole app to test one layer). Direction: routes → services → db; the data plane never
// reads the DB or the environment; the DB layer never reaches into the data plane; model/ and lib/ are the bottom.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'model-is-plain-data',
      comment: 'model/ holds plain data types and values: it imports nothing.',
      severity: 'error',
      from: { path: '^src/model/' },
      to: { path: '.' },
    },
    {
      name: 'lib-imports-no-layer',
      comment: 'lib/ is below every layer of the app.',
      severity: 'error',
      from: { path: '^src/lib/' },
      to: {
        path: '^src/((db|dataplane|cluster|modules|http|test)/|(app|deps|env|main|bootstrap|create-data-plane|dataplane-apply|jobs|sse|errors)\\.ts$)',
      },
    },
    {
      name: 'db-knows-no-upper-layer',
      comment: 'The DB layer never imports the data plane, the cluster, the modules or the HTTP layer.',
      severity: 'error',
      from: { path: '^src/db/' },
      to: { path: '^src/((dataplane|cluster|modules|http)/|(app|deps|jobs)\\.ts$)' },
    },
    {
      name: 'dataplane-reads-no-db-nor-env',
      comment: 'The data plane reads neither the DB nor the environment, and knows nothing of the API.',
      severity: 'error',
      from: { path: '^src/dataplane/' },
      to: {
        path: '^src/((db|cluster|modules|http)/|(app|deps|env|main|bootstrap|jobs)\\.ts$)|(^|/)node_modules/drizzle-orm/',
      },
    },
    {
      name: 'routes-call-services',
      comment: 'Routes call services only: no route queries the database.',
      severity: 'error',
      from: { path: '^src/modules/[^/]+/routes\\.ts$' },
      to: { path: '^src/db/|(^|/)node_modules/drizzle-orm/' },
    },
  ],
  options: {
    exclude: { path: '\\.test\\.tsx?$' },
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'types', 'default'] },
  },
};
