-- created_at/updated_at lost their SQL default (strftime) for a value drizzle fills in ($defaultFn), so the same
-- query code also runs on PostgreSQL. drizzle-kit generated a rebuild of nine tables for that, which here would lose
-- data: the migrator runs every migration inside one transaction, where `PRAGMA foreign_keys=OFF` does nothing, so
-- `DROP TABLE nodes` cascades into the nodes' services and tokens (tested: migrations-0006.test.ts). The old SQL
-- defaults stay in existing databases, unused by drizzle and harmless; only the snapshot moves on.
SELECT 1;
