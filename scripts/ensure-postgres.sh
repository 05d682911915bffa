#!/usr/bin/env bash
# Installs Debian's PostgreSQL server when its binaries are missing and we may install (root).
set -euo pipefail
have() { command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; }
if have && id postgres >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" != 0 ]; then
  echo "PostgreSQL server binaries are missing: run 'sudo apt-get install postgresql' or set DATABASE_URL" >&2
  exit 1
fi
echo "installing PostgreSQL from Debian..."
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq postgresql >/dev/null
