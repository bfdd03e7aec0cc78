# shellcheck shell=bash
# Sourced by test.sh: the PostgreSQL the server's store tests use (apps/server/src/test/postgres.ts). Debian's cluster
# is started without systemd when it is down (and left running: parallel runs share it), and a login role for the
# tests is made once. Tests reach it over 127.0.0.1 only; the role may create databases (each test gets its own) and
# nothing else.
start_test_postgres() {
  local cluster version name port status
  cluster=$(pg_lsclusters --no-header 2>/dev/null | head -n 1)
  if [ -z "$cluster" ]; then echo "no PostgreSQL cluster (install-deps installs postgresql)" >&2; return 1; fi
  read -r version name port status _ <<<"$cluster"
  if [ "$status" != online ]; then
    pg_ctlcluster --skip-systemctl-redirect "$version" "$name" start || return 1
  fi
  # Idempotent: the role is created once, its password reset to the known one every run.
  runuser -u postgres -- psql -q -v ON_ERROR_STOP=1 -p "$port" -d postgres <<'SQL' || return 1
SELECT 'CREATE ROLE postern_test' WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'postern_test')\gexec
ALTER ROLE postern_test WITH LOGIN CREATEDB NOSUPERUSER PASSWORD 'postern_test';
-- DROP DATABASE … WITH (FORCE) ends what is still connected to a test database (autovacuum included).
GRANT pg_signal_backend TO postern_test;
SQL
  export POSTERN_TEST_DATABASE_URL="postgres://postern_test:postern_test@127.0.0.1:${port}/postgres"
  export POSTERN_TEST_POSTGRES=required
}

