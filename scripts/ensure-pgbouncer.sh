#!/usr/bin/env bash
# Installs Debian's PgBouncer when it is missing and we may install (root): tests put it in front of
# PostgreSQL in transaction mode, as deployments that outgrow one server's connections do.
exec bash "$(dirname "$0")/ensure-deb.sh" pgbouncer
