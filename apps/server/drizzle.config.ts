import { defineConfig } from 'drizzle-kit';

// `pnpm --filter @postern/server exec drizzle-kit generate` writes the SQL migrations committed under drizzle/;
// the server applies them at boot (db/client.ts).
export default defineConfig({
  dialect: 'sqlite',
  schema: './src/db/schema.ts',
  out: './drizzle',
});
