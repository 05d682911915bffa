#!/usr/bin/env bash
# Installs what `make run-ha` and `make test-ha` run, when missing and we may install (root): from
# Debian bookworm etcd (etcd-server), pgBackRest and the Python libraries Patroni runs on; Patroni
# itself is trixie's 4.0.7, fetched into var/patroni by ensure-patroni.sh (bookworm's 3.0.2 could
# give a stalled primary the leader key back: docs/replicas.md). PostgreSQL, HAProxy and PgBouncer
# have their own ensure scripts. Debian's etcd service, if the package started one, is stopped: the
# stack runs its own three members on free ports.
set -euo pipefail
here=$(dirname "$0")
bash "$here/ensure-deb.sh" etcd-server etcd
systemctl disable --now etcd >/dev/null 2>&1 || service etcd stop >/dev/null 2>&1 || true
bash "$here/ensure-deb.sh" pgbackrest
missing=()
for pkg in python3-psycopg2 python3-yaml python3-click python3-prettytable python3-dateutil python3-psutil python3-urllib3; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "Patroni's Python libraries are missing: run 'sudo apt-get install ${missing[*]}'" >&2
    exit 1
  fi
  echo "installing ${missing[*]} from Debian..."
  export DEBIAN_FRONTEND=noninteractive
  bash "$(dirname "$0")/apt-update.sh"
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
bash "$here/ensure-patroni.sh" "$here/../var/patroni"
