-- The role the exporters read PostgreSQL as (prometheus.yml's postgres job; the PgBouncer
-- exporter's user, listed in pgbouncer.ini's stats_users): pg_monitor reads the statistics views
-- (pg_stat_replication, pg_replication_slots, pg_stat_statements) and nothing of the tables' rows.
-- Run once as a superuser: psql -v password="'...'" -f deploy/monitoring/monitor-role.sql
CREATE ROLE triad_monitor LOGIN PASSWORD :password;
GRANT pg_monitor TO triad_monitor;
