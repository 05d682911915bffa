#!/usr/bin/env bash
# Installs Debian's PostgreSQL server, and pg_partman for it, when missing and we may install
# (root). The orders ledger is partitioned by month by pg_partman (migration 00340), so every
# cluster the server or the tests start needs the extension beside the server binaries.
set -euo pipefail
have() { command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; }
have_partman() { ls /usr/share/postgresql/*/extension/pg_partman.control >/dev/null 2>&1; }
if have && id postgres >/dev/null 2>&1 && have_partman; then exit 0; fi
if [ "$(id -u)" != 0 ]; then
  echo "PostgreSQL server binaries or pg_partman are missing: run 'sudo apt-get install postgresql postgresql-15-partman' (the partman package of your PostgreSQL major version) or set DATABASE_URL" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
bash "$(dirname "$0")/apt-update.sh"
if ! have || ! id postgres >/dev/null 2>&1; then
  echo "installing PostgreSQL from Debian..."
  apt-get install -y -qq postgresql >/dev/null
fi
if ! have_partman; then
  major=$(ls /usr/lib/postgresql | sort -n | tail -1)
  echo "installing pg_partman for PostgreSQL $major from Debian..."
  apt-get install -y -qq "postgresql-$major-partman" >/dev/null
fi
