-- What the query code, written once in drizzle's SQLite dialect (db/postgres.ts), needs from PostgreSQL.
--
-- drizzle's SQLite dialect sends an explicit null for an omitted autoincrement id (SQLite then picks the next rowid).
-- A BEFORE INSERT trigger puts the column's sequence value in its place; NOT NULL is checked after BEFORE triggers.
-- A table added later gets its trigger from a custom migration running `SELECT postern_install_id_triggers();`
-- (postgres.test.ts fails while an autoincrement table lacks one).
CREATE FUNCTION postern_fill_id() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.id IS NULL THEN
    NEW.id := nextval(TG_ARGV[0]::regclass);
  END IF;
  RETURN NEW;
END
$$;
--> statement-breakpoint
CREATE FUNCTION postern_install_id_triggers() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  owned record;
BEGIN
  -- Every sequence owned by an `id` column of this schema (bigserial), on a table without the trigger yet.
  FOR owned IN
    SELECT d.refobjid AS table_oid, s.oid AS sequence_oid
    FROM pg_class s
    JOIN pg_depend d ON d.objid = s.oid AND d.classid = 'pg_class'::regclass
      AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')
    JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
    WHERE s.relkind = 'S' AND a.attname = 'id'
      AND s.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
      AND NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = d.refobjid AND t.tgname = 'postern_fill_id')
  LOOP
    EXECUTE format(
      'CREATE TRIGGER postern_fill_id BEFORE INSERT ON %s FOR EACH ROW EXECUTE FUNCTION postern_fill_id(%L)',
      owned.table_oid::regclass, owned.sequence_oid::regclass::text);
  END LOOP;
END
$$;
--> statement-breakpoint
SELECT postern_install_id_triggers();
--> statement-breakpoint
-- SQLite's instr(haystack, needle), which the search queries use: strpos under SQLite's name.
CREATE FUNCTION instr(haystack text, needle text) RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN strpos(haystack, needle);
