#!/usr/bin/env bash
# Installs Debian's PgBouncer when it is missing and we may install (root): the replica run puts it in
# front of the primary in transaction mode, as deployments that outgrow one server's connections do.
set -euo pipefail
command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "pgbouncer is missing: run 'sudo apt-get install pgbouncer'" >&2
  exit 1
fi
echo "installing pgbouncer from Debian..."
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq pgbouncer >/dev/null
# The package starts a system-wide pgbouncer on its default config; the project runs its own.
systemctl disable --now pgbouncer >/dev/null 2>&1 || service pgbouncer stop >/dev/null 2>&1 || true
