#!/usr/bin/env bash
# Installs Debian's HAProxy when it is missing and we may install (root): the replica test and
# `make run-replicas` put it in front of the servers as a real round-robin load balancer.
set -euo pipefail
command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "haproxy is missing: run 'sudo apt-get install haproxy'" >&2
  exit 1
fi
echo "installing haproxy from Debian..."
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq haproxy >/dev/null
# The package starts a system-wide haproxy on its default config; the project runs its own.
systemctl disable --now haproxy >/dev/null 2>&1 || service haproxy stop >/dev/null 2>&1 || true
