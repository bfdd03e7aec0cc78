import { defineConfig } from 'drizzle-kit';

// `pnpm --filter @postern/server exec drizzle-kit generate --config drizzle.pg.config.ts` writes the PostgreSQL
// migrations committed under drizzle-pg/, from the twin of schema.ts that schema-pg.ts derives; db/postgres.ts
// applies them when a gateway opens a PostgreSQL store. Run it after every `drizzle-kit generate` for SQLite.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/schema-pg.ts',
  out: './drizzle-pg',
});
