#!/usr/bin/env bash
# apt-update.sh: apt-get update, unless one of ours ran in the last hour: make test's installs on a
# fresh machine (PostgreSQL, HAProxy, PgBouncer, Chromium, Prometheus) then read Debian's package
# lists once instead of once each.
set -euo pipefail
stamp=/var/lib/apt/lists/.triad-updated
if [ -n "$(find "$stamp" -mmin -60 2>/dev/null)" ]; then exit 0; fi
DEBIAN_FRONTEND=noninteractive apt-get update -qq
touch "$stamp"
