#!/usr/bin/env bash
# Installs what `make run-ha` and `make test-ha` run, from Debian, when missing and we may install
# (root): etcd (etcd-server), Patroni and pgBackRest; PostgreSQL, HAProxy and PgBouncer have their
# own ensure scripts. Debian's etcd service, if the package started one, is stopped: the stack runs
# its own three members on free ports.
set -euo pipefail
here=$(dirname "$0")
bash "$here/ensure-deb.sh" etcd-server etcd
systemctl disable --now etcd >/dev/null 2>&1 || service etcd stop >/dev/null 2>&1 || true
bash "$here/ensure-deb.sh" patroni
bash "$here/ensure-deb.sh" pgbackrest
